import { defineConfig, type TestProjectInlineConfiguration } from "vitest/config";
import { browserMustRun, browserPresent } from "./test/support/browserPresence.js";

/**
 * Four tiers, one run: `npm test` runs every project against the one PostgreSQL that the root
 * globalSetup starts (projects do not inherit it, so it runs once); `npm run test:<tier>` runs one.
 * - unit: pure functions, named `*.unit.test.ts` beside the tests of their capability;
 * - stack: a real PostgreSQL and the emulator over HTTP (every other file outside browser/ and faults/);
 * - browser: the admin UI in chromium. Whether it runs is decided here, for every file under
 *   test/browser/: without chromium the tier runs only test/support/browserSkipped.ts (one skipped
 *   test) and the global setup prints one line saying how to run them; under CI=true the files run
 *   anyway, and test/support/browserTier.ts fails each of them saying chromium is missing;
 * - faults: platform failures, PostgreSQL restarts and SIGKILLs of a child process.
 */
const FAULTS = ["test/faults/**/*.test.ts", "test/reconcile/crash.test.ts"];
const BROWSER = ["test/browser/**/*.test.ts"];
const BROWSER_SKIPPED = "test/support/browserSkipped.ts";
const UNIT = ["test/**/*.unit.test.ts"];

const shared = {
  testTimeout: 60_000,
  hookTimeout: 120_000,
  pool: "forks",
  env: { NODE_ENV: "test", LOG_LEVEL: process.env.LOG_LEVEL ?? "error" },
} as const;

const browserRuns = browserPresent || browserMustRun;

const tier = (
  name: string,
  include: string[],
  exclude: string[] = [],
  setupFiles: string[] = [],
): TestProjectInlineConfiguration => ({
  test: { ...shared, name, include, exclude: ["**/node_modules/**", ...exclude], setupFiles },
});

export default defineConfig({
  test: {
    globalSetup: ["test/support/globalSetup.ts"],
    // Two cores: two files at a time keeps the embedded PostgreSQL and the suites from starving each other.
    maxWorkers: 2,
    reporters: ["default"],
    projects: [
      tier("unit", UNIT),
      tier("stack", ["test/**/*.test.ts"], [...UNIT, ...BROWSER, ...FAULTS]),
      tier("browser", browserRuns ? BROWSER : [BROWSER_SKIPPED], [], ["test/support/browserTier.ts"]),
      tier("faults", FAULTS),
    ],
  },
});
