import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { CampaignPartitions1763700001920 } from "../../migrations/1763700001920-campaign-partitions.js";
import {
  decideItems,
  decideSchema,
  campaignDetail,
  startCampaign,
  startCampaignSchema,
} from "../../src/review/campaigns/index.js";
import { validate } from "../../src/http/validate.js";
import { systemClock } from "../../src/clock.js";
import { openDatabase } from "../../src/db/dataSource.js";
import type { Database, Queryable } from "../../src/db/database.js";
import { adminQuery } from "../support/db.js";
import { withDatabase } from "../support/globalSetup.js";

/**
 * Migration 1920 on a database that already holds campaigns (issue 35): their items move into a
 * partition each with their ids, decisions and reviewers unchanged, campaign_counts holds the
 * items' own counts, the ids' sequence goes on after them, and the product starts and decides on
 * the result. The migration is taken back (its `down`) to the shape before, the items written in
 * that shape, then run again.
 */

describe("migration 1920: campaign items partitioned, with their counts", () => {
  const name = `scim_partitions_${process.pid}`;
  const url = withDatabase(inject("adminDatabaseUrl"), name);
  const admin = (sql: string) => adminQuery(inject("adminDatabaseUrl"), sql);
  let db: Database;
  /** The migration's query runner: only its query() is used, here on the facade. */
  type Runner = Parameters<CampaignPartitions1763700001920["up"]>[0];
  const runner = (q: Queryable) => ({ query: (sql: string) => q.query(sql) }) as unknown as Runner;
  const migration = new CampaignPartitions1763700001920();

  /** Every item's identity and state, and the counts per campaign and reviewer, in SQL. */
  const items = () =>
    db.query(`SELECT id::text, campaign_id, user_name, reviewer, decision, decided_by FROM campaign_items ORDER BY id`);
  const countsOfItems = () =>
    db.query(
      `SELECT campaign_id, reviewer, count(*)::int AS items, count(*) FILTER (WHERE decision = 'keep')::int AS kept,
              count(*) FILTER (WHERE decision = 'revoke')::int AS revoked
         FROM campaign_items GROUP BY 1, 2 ORDER BY 1, 2`,
    );

  beforeAll(async () => {
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin(`CREATE DATABASE ${name}`);
    db = await openDatabase({ url, poolSize: 2, applicationName: "partition-migration-test" });
    await db.migrate();
  }, 120_000);
  afterAll(async () => {
    await db?.close();
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });

  it("moves existing items into a partition each, ids and decisions kept, and counts them", async () => {
    await migration.down(runner(db));
    const [kind] = await db.query<{ relkind: string }>(`SELECT relkind FROM pg_class WHERE relname = 'campaign_items'`);
    expect(kind!.relkind).toBe("r"); // the table before migration 1920 (0.2.0 had no campaigns)
    for (const n of [1, 2]) {
      const [c] = await db.query<{ id: string }>(
        `INSERT INTO campaigns (name, scope, reviewers, fallback_reviewer, due_at, started_by, started_at)
         VALUES ($1, '{"kind":"everything"}', '[]', 'name:a@example.com', now() + interval '1 day', 'test', now()) RETURNING id`,
        [`before ${n}`],
      );
      await db.query(
        `INSERT INTO campaign_items (campaign_id, user_id, user_name, scope, permission, reviewer, decision, decided_by)
         SELECT $1, gen_random_uuid(), format('u%s@example.com', g), 'workspace', 'basic_access',
                CASE WHEN g % 2 = 0 THEN 'name:a@example.com' ELSE 'name:b@example.com' END,
                CASE WHEN g % 5 = 0 THEN 'keep' WHEN g % 7 = 0 THEN 'revoke' END,
                CASE WHEN g % 5 = 0 OR g % 7 = 0 THEN 'someone' END
           FROM generate_series(1, 50 * $2::int) g`,
        [c!.id, n],
      );
    }
    const before = await items();
    const counted = await countsOfItems();
    expect(before).toHaveLength(150);

    await db.transaction((tx) => migration.up(runner(tx)));

    expect(await items()).toEqual(before);
    expect(
      await db.query(
        `SELECT campaign_id, reviewer, items, kept, revoked FROM campaign_counts ORDER BY campaign_id, reviewer`,
      ),
    ).toEqual(counted);
    const partitions = await db.query<{ relid: string; n: number }>(
      `SELECT relid::text, (xpath('/row/n/text()', query_to_xml(format('SELECT count(*) AS n FROM ONLY %s', relid), false, true, '')))[1]::text::int AS n
         FROM pg_partition_tree('campaign_items') WHERE isleaf ORDER BY 2`,
    );
    expect(partitions.map((p) => p.n)).toEqual([0, 50, 100]); // the default partition, then each campaign's

    // The product on the result: a start (its ids after the copied ones) and a decision, counted.
    const deps = { db, clock: systemClock };
    const [{ id: someone }] = await db.query<{ id: string }>(
      `INSERT INTO platform_accounts (user_id, user_name, platform_id, state, last_applied, applied_at, created_by_connector)
       VALUES (gen_random_uuid(), 'z@example.com', 'p-z', 'active',
               '{"userName":"z@example.com","companyPermissions":["admin"],"workspaces":[]}', now(), true) RETURNING user_id AS id`,
    );
    expect(someone).toBeTruthy();
    const started = await startCampaign(
      deps,
      validate(startCampaignSchema, {
        name: "after",
        scope: { kind: "everything" },
        dueAt: new Date(Date.now() + 86_400_000).toISOString(),
        fallbackReviewer: "a@example.com",
      }),
      "test",
    );
    const [item] = await db.query<{ id: string }>(`SELECT id::text FROM campaign_items WHERE campaign_id = $1`, [
      started.id,
    ]);
    expect(BigInt(item!.id)).toBeGreaterThan(BigInt(before.at(-1)!.id as string));
    await decideItems(
      deps,
      started.id,
      { name: "a@example.com", role: "admin" },
      validate(decideSchema, { items: [item!.id], decision: "keep" }),
    );
    expect((await campaignDetail(deps, started.id)).counts).toMatchObject({ items: 1, kept: 1, open: 0 });
  }, 120_000);
});
