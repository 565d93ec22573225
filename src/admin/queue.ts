import { getBudgetStatus, type BudgetStatus } from "../reconcile/budgetLedger.js";
import { queueStatus, type QueueStatus } from "../reconcile/queueStatus.js";
import type { AdminDataDeps } from "./deps.js";

/**
 * Today's platform budget as GET /admin/api/budget answers it and the overview's gauge reads it
 * (`res.json` sends the dates as ISO strings).
 */
export function presentBudget(b: BudgetStatus) {
  return {
    limit: b.limit,
    used: b.used,
    reserve: b.reserve,
    remaining: b.remaining,
    remainingWithReserve: b.remainingWithReserve,
    resetsAt: b.resetsAt,
    window: b.window,
  };
}

/** The reconcile queue as GET /admin/api/queue answers it and the overview reads it. */
export function presentQueue(q: QueueStatus) {
  return {
    pending: q.pending,
    total: q.total,
    settling: { count: q.settling.count, nextAt: q.settling.nextAt },
    pendingDeletes: { count: q.pendingDeletes.count, nextAt: q.pendingDeletes.nextAt },
    parked: q.parked,
    oldestEnqueuedAt: q.oldestEnqueuedAt,
    eta: q.eta,
    budget: presentBudget(q.budget),
  };
}

export type BudgetView = ReturnType<typeof presentBudget>;

type QueueDeps = Pick<AdminDataDeps, "db" | "clock" | "budget">;

/** GET /admin/api/budget. */
export async function budgetView(deps: QueueDeps): Promise<BudgetView> {
  return presentBudget(await getBudgetStatus(deps.db, deps.budget, deps.clock.now()));
}

/** GET /admin/api/queue and the overview's queue panel. */
export async function queueView(deps: QueueDeps): Promise<ReturnType<typeof presentQueue>> {
  return presentQueue(await queueStatus(deps.db, deps.budget, deps.clock.now()));
}
