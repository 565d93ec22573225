import { chmod, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { openDatabase } from "../../src/db/dataSource.js";
import { startEmbeddedPostgres } from "../../src/db/embedded.js";
import { browserMustRun, browserPresent, browserSkipMessage } from "./browserPresence.js";

/**
 * One PostgreSQL for the whole run: DATABASE_URL when set, else an embedded one in a temp dir.
 * A template database is migrated once; each test file clones it (see db.ts), so files are
 * isolated from each other and can run side by side.
 */

export const TEMPLATE_DB = "scim_test_template";

declare module "vitest" {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
    templateDatabase: string;
  }
}

export default async function setup(project: TestProject) {
  // `npm run test:unit` alone needs no database (pure units; see vitest.config.ts).
  if (project.vitest.projects.every((p) => p.name === "unit")) return;
  // The browser tier skipped for want of chromium (vitest.config.ts): one line saying how to run it.
  if (!browserPresent && !browserMustRun && project.vitest.projects.some((p) => p.name === "browser"))
    console.warn(browserSkipMessage);
  let stop: (() => Promise<void>) | undefined;
  let adminUrl = process.env.DATABASE_URL;
  let dir: string | undefined;
  if (!adminUrl) {
    dir = await mkdtemp(path.join(os.tmpdir(), "scim-connector-test-pg-"));
    // As root the server runs as the 'postgres' user, which must be able to enter the folder.
    await chmod(dir, 0o755);
    const embedded = await startEmbeddedPostgres(path.join(dir, "data"), {
      persistent: false,
      throwaway: true,
      database: "postgres",
    });
    adminUrl = embedded.url;
    stop = embedded.stop;
  }
  const template = `${TEMPLATE_DB}_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${template}`);
  await admin.query(`CREATE DATABASE ${template}`);
  await admin.end();

  const templateUrl = withDatabase(adminUrl, template);
  const db = await openDatabase({ url: templateUrl, poolSize: 1, applicationName: "scim-connector-test" }); // TEST_CONNECTION_NAME (support/db.ts);
  await db.migrate();
  await db.close();

  project.provide("adminDatabaseUrl", adminUrl);
  project.provide("templateDatabase", template);

  return async () => {
    if (stop) await stop();
    else {
      const cleanup = new pg.Client({ connectionString: adminUrl });
      await cleanup.connect();
      const { rows } = await cleanup.query<{ datname: string }>(
        `SELECT datname FROM pg_database WHERE datname = $1 OR datname LIKE $2`,
        [template, `scim_test_${process.pid}_%`],
      );
      for (const row of rows) await cleanup.query(`DROP DATABASE IF EXISTS "${row.datname}" WITH (FORCE)`);
      await cleanup.end();
    }
    if (dir) await rm(dir, { recursive: true, force: true });
  };
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}
