import { execFile, spawn } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import request from "supertest";
import { describe, expect, inject, it } from "vitest";
import { withDatabase } from "../support/globalSetup.js";

/**
 * The Docker image's runtime command without Docker: `npm run build`'s script into a scratch
 * directory, then `node dist/main.js` against an EMPTY database, as the image runs it. It must
 * find its migrations in dist/migrations, apply them, answer /readyz, and stop on SIGTERM.
 * (Built under test-output/ so that node_modules resolve as in /app, and so that the shared
 * dist/ that bin/scim-connector.js prefers is never touched by a test.)
 */

const root = path.resolve(import.meta.dirname, "../..");
const outDir = path.join(root, "test-output", "build-check", "dist");

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: inject("adminDatabaseUrl") });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

describe("the image's runtime command", () => {
  it("npm run build emits dist/main.js and dist/migrations; node dist/main.js migrates an empty database and serves", { timeout: 240_000 }, async () => {
    await promisify(execFile)(process.execPath, ["scripts/build.mjs", outDir], { cwd: root, timeout: 200_000 });
    expect(existsSync(path.join(outDir, "main.js"))).toBe(true);
    expect(existsSync(path.join(outDir, "migrations", "1763700000600-quarantine.js"))).toBe(true);

    const name = `scim_build_check_${process.pid}`;
    await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await adminQuery(`CREATE DATABASE ${name}`);
    const child = spawn(process.execPath, [path.join(outDir, "main.js")], {
      cwd: root,
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
      expect((await request(url).get("/scim/v2/Users").set("Authorization", "Bearer build-check-idp-token-0123456789")).status).toBe(200);
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
      // Every migration, loaded from dist/migrations, is recorded as applied.
      const client = new pg.Client({ connectionString: withDatabase(inject("adminDatabaseUrl"), name) });
      await client.connect();
      const applied = await client.query("SELECT count(*)::int AS n FROM typeorm_migrations").finally(() => client.end());
      const files = readdirSync(path.join(outDir, "migrations")).filter((f) => /^\d{13}-.*\.js$/.test(f));
      expect(applied.rows[0].n).toBe(files.length);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
      await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    }
  });
});
