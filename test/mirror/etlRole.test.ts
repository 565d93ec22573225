import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.js";

/**
 * docs/go-live.md's ETL role, as written: its GRANTs (read from the document) let a role that is
 * not the connector's write all three mirror tables, upserts included, and the triggers queue the
 * changes for the sync under that role; the role can read nothing else.
 */

const ROLE = `scim_etl_test_${process.pid}`;

async function documentedEtlGrants(): Promise<string[]> {
  const doc = await readFile(path.resolve(import.meta.dirname, "../../docs/go-live.md"), "utf8");
  const block = /```sql\n([\s\S]*?)```/.exec(doc)![1]!;
  return block
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line.startsWith("GRANT") && line.includes("scim_etl"))
    .map((line) => line.replace(/\bscim_etl\b/g, ROLE));
}

describe("the ETL role of docs/go-live.md", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
    await database.db.query(`DROP ROLE IF EXISTS ${ROLE}`);
    await database.db.query(`CREATE ROLE ${ROLE} NOLOGIN`);
    for (const grant of await documentedEtlGrants()) await database.db.query(grant);
  });
  afterAll(async () => {
    await database?.db.query(`DROP OWNED BY ${ROLE}`).catch(() => undefined);
    await database?.drop();
    await database?.db.query(`DROP ROLE IF EXISTS ${ROLE}`).catch(() => undefined);
  });

  const asEtl = (sql: string) =>
    database.db.transaction(async (tx) => {
      await tx.query(`SET LOCAL ROLE ${ROLE}`);
      await tx.query(sql);
    });

  it("writes and upserts every mirror table, and the changes are queued for the sync", async () => {
    expect(await documentedEtlGrants()).not.toHaveLength(0);
    await asEtl(
      `INSERT INTO mirror.email_subscription_states (email, subscription_state) VALUES ('ann@example.com', 'subscribed')`,
    );
    await asEtl(
      `INSERT INTO mirror.email_subscription_states (email, subscription_state) VALUES ('ann@example.com', 'unsubscribed')
       ON CONFLICT (email) DO UPDATE SET subscription_state = EXCLUDED.subscription_state, updated_at = now()`,
    );
    await asEtl(
      `INSERT INTO mirror.subscription_group_states (subscription_group_id, phone, subscription_state) VALUES ('g1', '+15550100', 'subscribed')
       ON CONFLICT (subscription_group_id, external_id, email, phone) DO UPDATE SET subscription_state = EXCLUDED.subscription_state`,
    );
    await asEtl(
      `INSERT INTO mirror.preference_centers (preference_center_external_id, page_html, confirmation_html) VALUES ('pc1', '<p>x</p>', '<p>y</p>')`,
    );
    const pending = await database.db.query<{ kind: string; payload: Record<string, unknown> }>(
      `SELECT kind, payload FROM mirror_sync.pending ORDER BY kind`,
    );
    expect(pending.map((p) => p.kind)).toEqual(["email", "preference_center", "subscription_group"]);
    expect(pending[0]!.payload).toMatchObject({ email: "ann@example.com", state: "unsubscribed" });
  });

  it("reads nothing outside the mirror tables", async () => {
    await expect(asEtl(`SELECT 1 FROM idp_users LIMIT 1`)).rejects.toThrow(/permission denied/);
    await expect(asEtl(`SELECT 1 FROM scim_tokens LIMIT 1`)).rejects.toThrow(/permission denied/);
  });
});
