import { randomBytes } from "node:crypto";
import pg from "pg";
import type { Database } from "../../src/db/database.js";
import { inject } from "vitest";
import { openDatabase } from "../../src/db/dataSource.js";
import { withDatabase } from "./globalSetup.js";

/**
 * A fresh, fully migrated database for one test file (a clone of the migrated template).
 * Call in beforeAll; call drop() in afterAll.
 */
/** The harness's own connections, told apart from the connector's roles (CONNECTION_NAMES). */
export const TEST_CONNECTION_NAME = "scim-connector-test";

export type TestDatabase = { url: string; db: Database; drop(): Promise<void> };

export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = inject("adminDatabaseUrl");
  const template = inject("templateDatabase");
  const name = `scim_test_${template.split("_").pop()}_${randomBytes(6).toString("hex")}`;
  await adminQuery(adminUrl, `CREATE DATABASE ${name} TEMPLATE ${template}`);
  const url = withDatabase(adminUrl, name);
  const db = await openDatabase({ url, poolSize: 10, applicationName: TEST_CONNECTION_NAME });
  return {
    url,
    db,
    async drop() {
      if (db.isOpen) await db.close();
      await adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/** One statement on its own connection (CREATE/DROP DATABASE, or a look at a database the test does not hold open). */
export async function adminQuery<Row = unknown>(url: string, sql: string): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows as Row[];
  } finally {
    await client.end();
  }
}
