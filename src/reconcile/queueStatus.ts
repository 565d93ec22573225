import type { Database } from "../db/database.js";
import { getBudgetStatus, type BudgetStatus } from "./budget/budgetLedger.js";
import { queueDepth, type QueueEntry } from "../db/reconcile/queueReads.js";
import { allowance, estimateDrain, type BudgetPolicy } from "./budget/budget.js";
import { PRIORITY } from "./planner.js";

const PRIORITY_NAMES: Record<number, string> = {
  [PRIORITY.deprovision]: "deprovision",
  [PRIORITY.reduction]: "permission reduction",
  [PRIORITY.create]: "create",
  [PRIORITY.update]: "update",
  [PRIORITY.verify]: "verification",
};

export type QueueStatus = {
  /** `settling`: grants waiting for the user to be quiet (the settle window), not yet ready. */
  pending: {
    priority: number | null;
    name: string;
    action: string | null;
    count: number;
    ready: number;
    settling: number;
  }[];
  total: number;
  /** Grants waiting to settle, and when the next one goes out (null when none waits). */
  settling: { count: number; nextAt: Date | null };
  /** Stripped accounts whose DELETE waits for the grace (counted apart from `pending` and `total`), and the next one due. */
  pendingDeletes: { count: number; nextAt: Date | null };
  parked: number;
  oldestEnqueuedAt: Date | null;
  /** When the pending work should be done at the current budget (null when nothing waits). */
  eta: Date | null;
  budget: BudgetStatus;
};

/** Pending work by priority, and an ETA at the budget's pace (about one platform call per pending user). */
export async function queueStatus(db: Database, policy: BudgetPolicy, now: Date): Promise<QueueStatus> {
  const [depth, budget] = await Promise.all([queueDepth(db, now), getBudgetStatus(db, policy, now)]);
  const pending = depth.byPriority.map((row) => ({
    priority: row.priority,
    name: row.priority === null ? "not yet classified" : (PRIORITY_NAMES[row.priority] ?? `priority ${row.priority}`),
    action: row.action,
    count: row.pending,
    ready: row.ready,
    settling: row.settling,
  }));
  const total = pending.reduce((sum, p) => sum + p.count, 0);
  const deprovisions = pending.filter((p) => p.priority === PRIORITY.deprovision).reduce((sum, p) => sum + p.count, 0);
  const ordinary = total - deprovisions;
  const etaOrdinary = estimateDrain(now, ordinary, budget.remaining, allowance(policy, "ordinary"), budget.resetsAt);
  const etaDeprovisions = estimateDrain(now, deprovisions, budget.remainingWithReserve, policy.limit, budget.resetsAt);
  const eta =
    [etaOrdinary, etaDeprovisions].filter((d): d is Date => d !== null).sort((a, b) => b.getTime() - a.getTime())[0] ??
    null;
  const settling = { count: pending.reduce((sum, p) => sum + p.settling, 0), nextAt: depth.nextSettleAt };
  return {
    pending,
    total,
    settling,
    pendingDeletes: depth.pendingDeletes,
    parked: depth.parked,
    oldestEnqueuedAt: depth.oldestEnqueuedAt,
    eta,
    budget,
  };
}

/**
 * One user's queue row in words: why the planned action has not gone out yet, and when it will
 * (`plan` prints it; the admin's user page shows it, so that a grant held by the settle window
 * does not look lost). `time` formats the instants: ISO for the CLI, the page's own format there.
 */
export function describeQueueEntry(
  entry: QueueEntry,
  now: Date,
  time: (at: Date) => string = (at) => at.toISOString(),
): string {
  if (entry.parkedAt) return `parked since ${time(entry.parkedAt)} after a terminal failure (an admin retries it)`;
  if (entry.claimed) return "being reconciled now";
  if (entry.priority === null) return "queued, not yet classified";
  if (entry.settleUntil && entry.settleUntil > now) {
    return `waiting to settle until ${time(entry.settleUntil)} (a grant held until the user is quiet, so the changes that follow go out in one call)`;
  }
  if (entry.action === "held-legacy")
    return "held: the platform refuses the legacy permission strings this grant carries; it goes out once the mapping is migrated (scim-connector mapping migrate)";
  if (entry.action === "await-delete" && entry.notBefore > now)
    return `pending delete at ${time(entry.notBefore)} (a stripped account, deleted when the grace ends)`;
  if (entry.notBefore > now) return `deferred until ${time(entry.notBefore)} (a retry, a platform pause or the budget)`;
  return "queued, ready to go";
}
