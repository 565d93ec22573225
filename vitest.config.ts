import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/globalSetup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    // Two cores: two files at a time keeps the embedded PostgreSQL and the suites from starving each other.
    maxWorkers: 2,
    reporters: ["default"],
    env: { NODE_ENV: "test", LOG_LEVEL: process.env.LOG_LEVEL ?? "error" },
  },
});
