import type { Queryable } from "../database.js";

/**
 * A campaign's items as a partition of its own (migrations/1763700001920-campaign-partitions.ts):
 * written into a bare table, then given what the partitioned table requires, then attached. At
 * 500,000 items this costs a fraction of inserting into the indexed, constrained table: each index
 * is built from the rows (one sort) instead of one descent of its tree per item, and the foreign
 * key to `campaigns` is checked by one join instead of one look-up per item (docs/performance.md).
 * Everything runs in the caller's transaction: a start that fails leaves no table behind.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The partition of a campaign's items (a campaign id is a uuid: checked, as it is written into DDL). */
function itemsPartitionOf(campaignId: string): string {
  if (!UUID.test(campaignId)) throw new Error(`not a campaign id: ${campaignId}`);
  return `campaign_items_${campaignId.replaceAll("-", "")}`;
}

/**
 * Creates the campaign's partition from `insertInto` (INSERTs INTO the table named by its
 * argument, run in order), records its counts per reviewer and attaches it; returns the items written.
 */
export async function writeItemsPartition(
  tx: Queryable,
  campaignId: string,
  insertInto: (table: string) => { sql: string; params: unknown[] }[],
): Promise<number> {
  const table = itemsPartitionOf(campaignId);
  const bound = `'${campaignId}'`;
  // The partitioned table's columns, defaults (the ids' sequence) and checks, and the partition's
  // bound as a check, which lets the attach skip the scan that would otherwise prove it.
  await tx.query(
    `CREATE TABLE ${table} (LIKE campaign_items INCLUDING DEFAULTS INCLUDING CONSTRAINTS,
       CONSTRAINT ${table}_bound CHECK (campaign_id = ${bound}))`,
  );
  let items = 0;
  for (const insert of insertInto(table)) items += await tx.execute(insert.sql, insert.params);
  await tx.query(
    `INSERT INTO campaign_counts (campaign_id, reviewer, items, kept, revoked)
     SELECT campaign_id, reviewer, count(*), 0, 0 FROM ${table} GROUP BY campaign_id, reviewer`,
  );
  // Built by one process each: on two shared cores, parallel workers would take the neighbours'
  // CPU for little, and a bench reading the backends' CPU would not see theirs.
  await tx.query(`SET LOCAL max_parallel_maintenance_workers = 0`);
  // The same definitions as the partitioned table's (the attach adopts them rather than build its own).
  await tx.query(`ALTER TABLE ${table} ADD PRIMARY KEY (id, campaign_id)`);
  await tx.query(`CREATE INDEX ON ${table} (reviewer, user_name, id)`);
  await tx.query(`CREATE INDEX ON ${table} (user_name, id)`);
  await tx.query(`ALTER TABLE ${table} ADD FOREIGN KEY (campaign_id) REFERENCES campaigns (id) ON DELETE CASCADE`);
  await tx.query(`ALTER TABLE campaign_items ATTACH PARTITION ${table} FOR VALUES IN (${bound})`);
  return items;
}

/**
 * Fresh planner statistics for a campaign's items, once they are in (a partition never analysed
 * would be planned blind): the columns the item queries filter, order and group on only (the
 * reasons' jsonb took most of a whole-table ANALYZE, for statistics no query reads). campaign_id
 * included: without its statistics the planner took `campaign_id = $1` for a selective condition
 * and read a reviewer's page through the primary key's whole index (80 ms instead of 1 at 20,000 users).
 */
export async function analyzeItemsPartition(db: Queryable, campaignId: string): Promise<void> {
  await db.query(
    `ANALYZE ${itemsPartitionOf(campaignId)} (campaign_id, reviewer, user_name, workspace, permission, decision, id)`,
  );
}
