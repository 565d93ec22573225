import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdtemp, readFile, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { generateToken, hashToken } from "../../src/auth/scimTokens.js";
import { freePort } from "../../src/db/embedded.js";
import { TokenRepository } from "../../src/db/auth/tokenRepository.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";
import { makeIdpKeys } from "../support/saml.js";
import { TEST_MAPPING } from "../support/stack.js";

/**
 * Only the embedded development defaults (no DATABASE_URL, NODE_ENV not production) mint and
 * print tokens. Anywhere else `scim-connector start` refuses to run without the secrets it would
 * have had to invent, says how to fix it, and prints no secret. Each start runs as a real child
 * process in an empty working directory, so a token file it wrote would show.
 */

const ROOT = path.resolve(import.meta.dirname, "../..");
const TOKEN_SHAPED = /\b(scim|adm)_[\w-]{20,}/;
/** Production names its platform (test/ops/productionTargets.test.ts); nothing here provisions anyone, so it is never called. */
const PLATFORM = {
  PLATFORM_URL: "http://127.0.0.1:9",
  PLATFORM_SCIM_TOKEN: "secrets-platform-token",
  PLATFORM_REQUEST_ORIGIN: "secrets-test",
};

const started: Run[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((run) => run.stop()));
});

type Run = { code: number | null; output: string; cwd: string; url: string; stop(): Promise<void> };

/** Starts the connector; resolves when it exits or answers /readyz. */
async function start(env: Record<string, string>): Promise<Run> {
  const cwd = await mkdtemp(path.join(os.tmpdir(), "scim-connector-secrets-"));
  const mappingFile = path.join(cwd, "..", `${path.basename(cwd)}-mapping.yaml`);
  await writeFile(mappingFile, TEST_MAPPING);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [path.join(ROOT, "bin/scim-connector.js"), "start"], {
    cwd,
    env: {
      PATH: process.env.PATH,
      HOST: "127.0.0.1",
      PORT: String(port),
      LOG_LEVEL: "info",
      MAPPING_FILE: mappingFile,
      RECONCILE_WORKERS: "0",
      RESYNC_CRON: "off",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr.on("data", (d: Buffer) => (output += d.toString()));
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve((exitCode = code))));
  await vi
    .waitFor(
      async () => {
        if (exitCode !== undefined) return;
        if (
          output.includes("scim-connector is running") &&
          (await fetch(`${url}/readyz`).then(
            (r) => r.ok,
            () => false,
          ))
        )
          return;
        throw new Error(`neither started nor stopped:\n${output}`);
      },
      { timeout: 60_000, interval: 100 },
    )
    .catch((error: unknown) => {
      child.kill("SIGKILL");
      throw error;
    });
  const code = exitCode ?? null;
  const run: Run = {
    code,
    get output() {
      return output;
    },
    cwd,
    url,
    async stop() {
      if (child.exitCode === null) {
        child.kill("SIGTERM");
        await exited;
      }
    },
  };
  started.push(run);
  return run;
}

describe("tokens outside the embedded development defaults", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => database?.drop());

  it.each([
    ["NODE_ENV=production", { NODE_ENV: "production", ...PLATFORM }],
    ["a DATABASE_URL in development", { NODE_ENV: "development" }],
  ])(
    "%s without SCIM_TOKEN or ADMIN_TOKEN: refuses to start, says the fix, prints and writes no token",
    { timeout: 90_000 },
    async (_label, env) => {
      const run = await start({ ...env, DATABASE_URL: database.url });
      expect(run.code, run.output).toBe(78);
      expect(run.output).toMatch(/ADMIN_TOKEN: is required .*openssl rand -base64 32.*or configure SAML sign-in/);
      expect(run.output).toMatch(/SCIM_TOKEN: is required .*scim-connector token create --name okta/);
      expect(run.output).not.toMatch(TOKEN_SHAPED);
      expect(run.output).not.toContain("scim-connector is running");
      expect(existsSync(path.join(run.cwd, ".data"))).toBe(false);
      expect(await new TokenRepository(database.db).list()).toEqual([]);
    },
  );

  it(
    "NODE_ENV=production without DATABASE_URL: refuses with the fix instead of starting an embedded database",
    { timeout: 90_000 },
    async () => {
      const run = await start({
        NODE_ENV: "production",
        SCIM_TOKEN: "prod-idp-token-0123456789abcdefgh",
        ADMIN_TOKEN: "prod-admin-token-0123456789abcdef",
      });
      expect(run.code, run.output).toBe(78);
      expect(run.output).toContain("DATABASE_URL: is required when NODE_ENV=production");
      expect(existsSync(path.join(run.cwd, ".data"))).toBe(false);
    },
  );

  it(
    "SAML on, ADMIN_TOKEN unset: starts with the admin JSON API off and prints no secret",
    { timeout: 90_000 },
    async () => {
      const run = await start({
        NODE_ENV: "production",
        ...PLATFORM,
        DATABASE_URL: database.url,
        SCIM_TOKEN: "prod-idp-token-0123456789abcdefgh",
        SAML_ENTRY_POINT: "https://idp.example.test/sso",
        SAML_ISSUER: "https://scim.example.test/admin/saml/metadata",
        SAML_IDP_CERT: makeIdpKeys("secrets-idp").cert,
        SAML_CALLBACK_URL: "https://scim.example.test/admin/saml/acs",
      });
      try {
        expect(run.code, run.output).toBeNull();
        expect(run.output).toContain("the admin JSON API is off");
        expect(run.output).toContain("(SCIM_TOKEN from the environment)");
        expect(run.output).not.toMatch(TOKEN_SHAPED);
        expect(run.output).not.toContain("prod-idp-token");
        expect(existsSync(path.join(run.cwd, ".data"))).toBe(false);
        const api = await fetch(`${run.url}/admin/api/budget`, {
          headers: { Authorization: "Bearer anything-at-all-0123456789" },
        });
        expect(api.status).toBe(401);
      } finally {
        await run.stop();
      }
    },
  );

  it(
    "no SCIM_TOKEN but a token made with `token create`: starts, and the banner names no token",
    { timeout: 90_000 },
    async () => {
      const token = generateToken();
      await new TokenRepository(database.db).create("okta", hashToken(token), token.slice(0, 10));
      const run = await start({
        NODE_ENV: "production",
        ...PLATFORM,
        DATABASE_URL: database.url,
        ADMIN_TOKEN: "prod-admin-token-0123456789abcdef",
      });
      try {
        expect(run.code, run.output).toBeNull();
        expect(run.output).toContain("(the tokens made with `scim-connector token create`)");
        expect(run.output).toContain("(ADMIN_TOKEN from the environment)");
        expect(run.output).not.toMatch(TOKEN_SHAPED);
        const scim = await fetch(`${run.url}/scim/v2/Users?count=1`, { headers: { Authorization: `Bearer ${token}` } });
        expect(scim.status).toBe(200);
        expect(await new TokenRepository(database.db).list()).toHaveLength(1); // nothing minted
      } finally {
        await run.stop();
      }
    },
  );
});

describe("the embedded development defaults", () => {
  it(
    "keep the embedded database and the tokens they print together in the folder holding EMBEDDED_PG_DIR, never in ./.data",
    { timeout: 120_000 },
    async () => {
      const home = await mkdtemp(path.join(os.tmpdir(), "scim-connector-embedded-"));
      await chmod(home, 0o755); // run as root, the embedded server runs as its own user
      const run = await start({ NODE_ENV: "development", EMBEDDED_PG_DIR: path.join(home, "postgres") });
      try {
        expect(run.code, run.output).toBeNull();
        const printed = run.output.match(TOKEN_SHAPED)?.[0];
        expect(printed, run.output).toBeDefined();
        expect(existsSync(path.join(home, "postgres"))).toBe(true);
        const kept = await Promise.all(
          ["idp-token", "admin-token"].map((name) => readFile(path.join(home, name), "utf8")),
        );
        expect(kept.map((token) => run.output.includes(token.trim()))).toEqual([true, true]);
        expect(existsSync(path.join(run.cwd, ".data"))).toBe(false);
      } finally {
        await run.stop();
      }
    },
  );
});
