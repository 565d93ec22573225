import type { Database, Queryable } from "../database.js";

/**
 * The budget ledger's rows: one per platform SCIM request, written BEFORE the request is sent,
 * under a transaction-scoped advisory lock so that no interleaving of replicas can overspend. What
 * a window is and how much of it a call may spend is decided in src/reconcile/budget/budgetLedger.ts.
 */

const LEDGER_LOCK = 7_429_001;

export type LedgerRow = {
  action: string;
  usesReserve: boolean;
  userId?: string;
  reconcileId?: string;
  runId?: string;
};

/** Runs `work` in a transaction holding the ledger's advisory lock (one debit at a time, all replicas). */
export async function withLedgerLock<T>(db: Database, work: (tx: Queryable) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    await tx.query(`SELECT pg_advisory_xact_lock($1)`, [LEDGER_LOCK]);
    return work(tx);
  });
}

export async function insertDebit(q: Queryable, spentAt: Date, row: LedgerRow): Promise<void> {
  await q.query(
    `INSERT INTO budget_debits (spent_at, action, uses_reserve, user_id, reconcile_id, run_id) VALUES ($1, $2, $3, $4, $5, $6)`,
    [spentAt, row.action, row.usesReserve, row.userId ?? null, row.reconcileId ?? null, row.runId ?? null],
  );
}

/**
 * Debits spent after `since` (or at it, when `sinceIncluded`), however late their time: a debit
 * is stamped with its caller's clock, read before it waited for the ledger's lock (or on a
 * replica whose clock is ahead), so one written earlier may carry a later time than the debit
 * being decided. Leaving those out let a debit pass the limit (seen under load: 19 creates on an
 * allowance of 18).
 */
export async function countDebits(q: Queryable, since: Date, sinceIncluded: boolean): Promise<number> {
  const rows = (await q.query(
    sinceIncluded
      ? `SELECT count(*)::int AS n FROM budget_debits WHERE spent_at >= $1`
      : `SELECT count(*)::int AS n FROM budget_debits WHERE spent_at > $1`,
    [since],
  )) as { n: number }[];
  return rows[0]?.n ?? 0;
}

/** When the debit at `offset` (oldest first) after `since` was spent (however late, as countDebits); null if there are fewer. */
export async function debitSpentAt(q: Queryable, since: Date, offset: number): Promise<Date | null> {
  const rows = (await q.query(
    `SELECT spent_at FROM budget_debits WHERE spent_at > $1 ORDER BY spent_at OFFSET $2 LIMIT 1`,
    [since, offset],
  )) as { spent_at: Date }[];
  return rows[0]?.spent_at ?? null;
}

/** Platform calls per UTC day and action, spent from `since` to `until` (the overview chart). */
export async function callsPerDay(
  db: Database,
  since: Date,
  until: Date,
): Promise<{ day: string; action: string; calls: number }[]> {
  const rows: { day: string; action: string; calls: string }[] = await db.query(
    `SELECT to_char(spent_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, action, count(*) AS calls
       FROM budget_debits WHERE spent_at >= $1 AND spent_at <= $2 GROUP BY 1, 2 ORDER BY 1, 2`,
    [since, until],
  );
  return rows.map((r) => ({ day: r.day, action: r.action, calls: Number(r.calls) }));
}

export type AnnouncedLimit = { announced: number; header: string; seenAt: Date };

/**
 * Records the limit the platform announced for a family; true when it differs from the one stored
 * (a first sight or a change), so that only a change is written and warned about.
 */
export async function recordAnnouncedLimit(
  q: Queryable,
  family: string,
  limit: { announced: number; header: string },
  at: Date,
): Promise<boolean> {
  const rows = await q.query(
    `INSERT INTO platform_announced_limits (family, announced, header, seen_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (family) DO UPDATE SET announced = excluded.announced, header = excluded.header, seen_at = excluded.seen_at
     WHERE platform_announced_limits.announced <> excluded.announced
     RETURNING family`,
    [family, limit.announced, limit.header, at],
  );
  return rows.length > 0;
}

export async function getAnnouncedLimit(q: Queryable, family: string): Promise<AnnouncedLimit | undefined> {
  const [row] = await q.query<{ announced: number; header: string; seen_at: Date }>(
    `SELECT announced, header, seen_at FROM platform_announced_limits WHERE family = $1`,
    [family],
  );
  return row && { announced: row.announced, header: row.header, seenAt: row.seen_at };
}

/** Debits of one action spent at or after `since` (however late, as countDebits): a lane's own daily cap. */
export async function countActionDebits(q: Queryable, action: string, since: Date): Promise<number> {
  const rows = (await q.query(`SELECT count(*)::int AS n FROM budget_debits WHERE action = $1 AND spent_at >= $2`, [
    action,
    since,
  ])) as { n: number }[];
  return rows[0]?.n ?? 0;
}

/** Budget ledger rows older than `cutoff` (the budget reads only its current window). */
export async function deleteDebitsBefore(db: Queryable, cutoff: Date): Promise<number> {
  return db.execute(`DELETE FROM budget_debits WHERE spent_at < $1`, [cutoff]);
}
