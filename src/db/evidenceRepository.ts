import type { Queryable } from "./database.js";
import type { Change } from "../reconcile/diff.js";

/** What the evidence pack reads: the log over a window, in batches, and the mapping in force. */

export type EvidenceLogEntry = {
  id: string;
  at: Date;
  queuedAt: Date | null;
  userName: string | null;
  action: string;
  outcome: string;
  trigger: unknown;
  changes: Change[];
  actor: string | null;
  error: string | null;
  chainHash: string | null;
};

const BATCH = 1000;

/** The log's entries with `from <= at < to`, in id order, a batch at a time (the window can be large). */
export async function* logWindow(db: Queryable, from: Date, to: Date): AsyncGenerator<EvidenceLogEntry[]> {
  let after = "0";
  for (;;) {
    const rows = await db.query<{
      id: string;
      at: Date;
      queued_at: Date | null;
      user_name: string | null;
      action: string;
      outcome: string;
      trigger: unknown;
      changes: Change[];
      actor: string | null;
      error: string | null;
      chain_hash: string | null;
    }>(
      `SELECT id, at, queued_at, user_name, action, outcome, trigger, changes, actor, error, chain_hash
         FROM reconcile_log WHERE at >= $1 AND at < $2 AND id > $3 ORDER BY id LIMIT ${BATCH}`,
      [from, to, after],
    );
    if (rows.length === 0) return;
    yield rows.map((r) => ({
      id: r.id,
      at: r.at,
      queuedAt: r.queued_at,
      userName: r.user_name,
      action: r.action,
      outcome: r.outcome,
      trigger: r.trigger,
      changes: r.changes,
      actor: r.actor,
      error: r.error,
      chainHash: r.chain_hash,
    }));
    after = rows[rows.length - 1]!.id;
    if (rows.length < BATCH) return;
  }
}

export type MappingInForce = { hash: string; appliedAt: Date; sourceText: string } | undefined;

export async function mappingInForce(db: Queryable): Promise<MappingInForce> {
  const [row] = await db.query<{ hash: string; applied_at: Date; source_text: string }>(
    `SELECT hash, applied_at, source_text FROM mapping_state WHERE id = 1`,
  );
  return row ? { hash: row.hash, appliedAt: row.applied_at, sourceText: row.source_text } : undefined;
}
