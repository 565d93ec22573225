import type { Database, Queryable } from "./database.js";
import { allowance, nextUtcMidnight, windowStart, type BudgetPolicy, type SpendKind } from "../reconcile/budget.js";

/**
 * The budget ledger: one row per platform SCIM request, written BEFORE the request is sent, under
 * a transaction-scoped advisory lock so that no interleaving of replicas can overspend. A crash
 * after the debit leaves the call counted: the ledger may over-count a call that never left, never
 * under-count one that did.
 */

const LEDGER_LOCK = 7_429_001;

export type Debit = { action: string; kind: SpendKind; userId?: string; reconcileId?: string; runId?: string };
export type DebitResult = { ok: true; used: number } | { ok: false; used: number; resetsAt: Date };

/** `onExhausted` runs in the debit's transaction when the call is refused (the budget.exhausted notification). */
export async function debitBudget(
  db: Database,
  policy: BudgetPolicy,
  now: Date,
  debit: Debit,
  onExhausted?: (tx: Queryable, refused: { used: number; resetsAt: Date }) => Promise<void>,
): Promise<DebitResult> {
  return db.transaction(async (tx) => {
    await tx.query(`SELECT pg_advisory_xact_lock($1)`, [LEDGER_LOCK]);
    const used = await countInWindow(tx, policy, now);
    if (used + 1 > allowance(policy, debit.kind)) {
      const refused = { ok: false as const, used, resetsAt: await resetsAt(tx, policy, now, debit.kind) };
      await onExhausted?.(tx, refused);
      return refused;
    }
    await tx.query(
      `INSERT INTO budget_debits (spent_at, action, uses_reserve, user_id, reconcile_id, run_id) VALUES ($1, $2, $3, $4, $5, $6)`,
      [
        now,
        debit.action,
        debit.kind === "reduction",
        debit.userId ?? null,
        debit.reconcileId ?? null,
        debit.runId ?? null,
      ],
    );
    return { ok: true, used: used + 1 };
  });
}

export type BudgetStatus = {
  limit: number;
  reserve: number;
  used: number;
  /** Calls still spendable on drift verification in this window. */
  spareForVerification: number;
  /** Calls still spendable on ordinary work in this window (the reserve excluded). */
  remaining: number;
  /** Including the reserve. */
  remainingWithReserve: number;
  resetsAt: Date;
  window: BudgetPolicy["window"];
};

export async function getBudgetStatus(db: Database, policy: BudgetPolicy, now: Date): Promise<BudgetStatus> {
  const used = await countInWindow(db, policy, now);
  return {
    limit: policy.limit,
    reserve: policy.reserve,
    used,
    spareForVerification: Math.max(0, allowance(policy, "verify") - used),
    remaining: Math.max(0, allowance(policy, "ordinary") - used),
    remainingWithReserve: Math.max(0, policy.limit - used),
    resetsAt: await resetsAt(db, policy, now, "ordinary"),
    window: policy.window,
  };
}

/** Platform calls per UTC day and action, for the last `days` days (the overview chart). */
export async function callsPerDay(
  db: Database,
  now: Date,
  days: number,
): Promise<{ day: string; action: string; calls: number }[]> {
  const since = new Date(windowStart(now, "utc-day").getTime() - (days - 1) * 86_400_000);
  const rows: { day: string; action: string; calls: string }[] = await db.query(
    `SELECT to_char(spent_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, action, count(*) AS calls
       FROM budget_debits WHERE spent_at >= $1 AND spent_at <= $2 GROUP BY 1, 2 ORDER BY 1, 2`,
    [since, now],
  );
  return rows.map((r) => ({ day: r.day, action: r.action, calls: Number(r.calls) }));
}

async function countInWindow(q: Queryable, policy: BudgetPolicy, now: Date): Promise<number> {
  const start = windowStart(now, policy.window);
  const rows = (await q.query(
    policy.window === "utc-day"
      ? `SELECT count(*)::int AS n FROM budget_debits WHERE spent_at >= $1 AND spent_at <= $2`
      : `SELECT count(*)::int AS n FROM budget_debits WHERE spent_at > $1 AND spent_at <= $2`,
    [start, now],
  )) as { n: number }[];
  return rows[0]?.n ?? 0;
}

/** When the next call of this kind becomes affordable. */
async function resetsAt(q: Queryable, policy: BudgetPolicy, now: Date, kind: SpendKind): Promise<Date> {
  if (policy.window === "utc-day") return nextUtcMidnight(now);
  // Rolling: a slot frees when the oldest debit that keeps us at the allowance leaves the window.
  const used = await countInWindow(q, policy, now);
  const excess = used - allowance(policy, kind);
  if (excess < 0) return now;
  const rows = (await q.query(
    `SELECT spent_at FROM budget_debits WHERE spent_at > $1 AND spent_at <= $2 ORDER BY spent_at OFFSET $3 LIMIT 1`,
    [windowStart(now, "rolling-24h"), now, excess],
  )) as { spent_at: Date }[];
  return new Date((rows[0]?.spent_at ?? now).getTime() + 86_400_000);
}
