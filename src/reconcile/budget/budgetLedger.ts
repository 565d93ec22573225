import type { Database, Queryable } from "../../db/database.js";
import { countDebits, debitSpentAt, insertDebit, withLedgerLock } from "../../db/reconcile/budgetRepository.js";
import { allowance, nextUtcMidnight, windowStart, type BudgetPolicy, type SpendKind } from "./budget.js";

/**
 * The budget's decisions over its ledger (src/db/reconcile/budgetRepository.ts): whether a call may be
 * spent, and what is left. A debit is written BEFORE the request is sent, under the ledger's lock;
 * a crash after the debit leaves the call counted: the ledger may over-count a call that never
 * left, never under-count one that did.
 */

export type Debit = { action: string; kind: SpendKind; userId?: string; reconcileId?: string; runId?: string };
export type DebitRefused = { used: number; resetsAt: Date; windowStart: Date };
export type DebitResult = { ok: true; used: number } | ({ ok: false } & DebitRefused);

/** `onExhausted` runs in the debit's transaction when the call is refused (the budget.exhausted notification). */
export async function debitBudget(
  db: Database,
  policy: BudgetPolicy,
  now: Date,
  debit: Debit,
  onExhausted?: (tx: Queryable, refused: DebitRefused) => Promise<void>,
): Promise<DebitResult> {
  return withLedgerLock(db, async (tx) => {
    const used = await countInWindow(tx, policy, now);
    if (used + 1 > allowance(policy, debit.kind)) {
      const refused = {
        ok: false as const,
        used,
        resetsAt: await resetsAt(tx, policy, now, debit.kind),
        windowStart: windowStart(now, policy.window),
      };
      await onExhausted?.(tx, refused);
      return refused;
    }
    const { kind, ...row } = debit;
    await insertDebit(tx, now, { ...row, usesReserve: kind === "reduction" });
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

/** A UTC day counts its first instant; a rolling window starts just after 24 hours back. */
function countInWindow(q: Queryable, policy: BudgetPolicy, now: Date): Promise<number> {
  return countDebits(q, windowStart(now, policy.window), policy.window === "utc-day");
}

/** When the next call of this kind becomes affordable. */
async function resetsAt(q: Queryable, policy: BudgetPolicy, now: Date, kind: SpendKind): Promise<Date> {
  if (policy.window === "utc-day") return nextUtcMidnight(now);
  // Rolling: a slot frees when the oldest debit that keeps us at the allowance leaves the window.
  const used = await countInWindow(q, policy, now);
  const excess = used - allowance(policy, kind);
  if (excess < 0) return now;
  const spentAt = await debitSpentAt(q, windowStart(now, "rolling-24h"), excess);
  return new Date((spentAt ?? now).getTime() + 86_400_000);
}
