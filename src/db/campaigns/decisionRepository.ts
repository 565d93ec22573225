import type { Queryable } from "../database.js";
import { appendAllToChain, CAMPAIGN_DECISIONS_CHAIN, canonicalRow } from "../auditChain.js";

/**
 * Campaign decisions: append-only rows, one per keep, revoke or item left undecided at the close,
 * each on the `campaign_decisions` hash chain (docs/access-review.md, "The tamper-evident log").
 * The item row keeps its current state for the pages; this table is the record, a granular
 * bundle's strings (`bundle`) included.
 */

export type DecisionRecord = {
  decision: "keep" | "revoke" | "undecided";
  comment: string | null;
  by: string;
  at: Date;
};

const INSERT_FROM_ITEMS = `
  INSERT INTO campaign_decisions (campaign_id, item_id, user_id, user_name, scope, workspace, team, permission, bundle, reviewer, decision, comment, decided_by, decided_at)
  SELECT campaign_id, id, user_id, user_name, scope, workspace, team, permission, bundle, reviewer, $3, $4, $5, $6
    FROM campaign_items`;

type InsertedRow = Record<string, unknown> & { id: string };
const chained = (rows: InsertedRow[]) => rows.map((r) => ({ id: String(r.id), canonical: canonicalRow(r) }));

/**
 * Records one decision on each of the items given, chained, in the caller's transaction. It takes
 * the chain's head: call it after every other write of the transaction but the log's entries.
 */
export async function appendDecisions(
  tx: Queryable,
  campaignId: string,
  itemIds: readonly string[],
  d: DecisionRecord,
): Promise<void> {
  if (!itemIds.length) return;
  await appendAllToChain(tx, CAMPAIGN_DECISIONS_CHAIN, async () =>
    chained(
      await tx.query<InsertedRow>(
        `${INSERT_FROM_ITEMS} WHERE campaign_id = $1 AND id = ANY($2::bigint[]) ORDER BY id RETURNING *`,
        [campaignId, itemIds, d.decision, d.comment, d.by, d.at],
      ),
    ),
  );
}

const CLOSE_BATCH = 5000;

/**
 * Records "undecided" for every item of the campaign still without a decision, a batch at a time
 * (a campaign can hold hundreds of thousands), chained; returns how many. Same lock order as
 * appendDecisions.
 */
export async function appendUndecided(
  tx: Queryable,
  campaignId: string,
  d: Omit<DecisionRecord, "decision">,
): Promise<number> {
  let after = "0";
  let total = 0;
  for (;;) {
    // The insert runs inside the append, after the head is locked: ids are drawn in chain order.
    const rows = await appendAllToChain(tx, CAMPAIGN_DECISIONS_CHAIN, async () => {
      const batch = await tx.query<InsertedRow>(
        `${INSERT_FROM_ITEMS} WHERE campaign_id = $1 AND decision IS NULL AND id > $2::bigint
         ORDER BY id LIMIT ${CLOSE_BATCH} RETURNING *`,
        [campaignId, after, "undecided", d.comment, d.by, d.at],
      );
      for (const r of batch) if (BigInt(r.item_id as string) > BigInt(after)) after = String(r.item_id);
      return chained(batch);
    });
    total += rows.length;
    if (rows.length < CLOSE_BATCH) return total;
  }
}

/** The strings of the decisions given that decided a bundle (by decision id; the others are absent). */
export async function bundlesOfDecisions(db: Queryable, ids: readonly string[]): Promise<Map<string, string[]>> {
  if (!ids.length) return new Map();
  const rows = await db.query<{ id: string; bundle: string[] }>(
    `SELECT id, bundle FROM campaign_decisions WHERE id = ANY($1::bigint[]) AND bundle IS NOT NULL`,
    [ids],
  );
  return new Map(rows.map((r) => [String(r.id), r.bundle]));
}
