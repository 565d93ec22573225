import type { AnnouncedLimit } from "../db/reconcile/budgetRepository.js";
import { scimAnnouncedLimit } from "../platform/announcedLimit.js";
import { getBudgetStatus, type BudgetStatus } from "../reconcile/budget/budgetLedger.js";
import { queueStatus, type QueueStatus } from "../reconcile/queueStatus.js";
import type { AdminDataDeps } from "./deps.js";

/**
 * Today's platform budget as GET /admin/api/budget answers it and the overview's gauge reads it
 * (`res.json` sends the dates as ISO strings).
 */
export function presentBudget(b: BudgetStatus, announced?: AnnouncedLimit) {
  return {
    limit: b.limit,
    used: b.used,
    reserve: b.reserve,
    remaining: b.remaining,
    remainingWithReserve: b.remainingWithReserve,
    resetsAt: b.resetsAt,
    window: b.window,
    /** The SCIM limit the platform's answers announce (null until one is seen); never spent by itself. */
    platformAnnounced: announced
      ? { limit: announced.announced, header: announced.header, seenAt: announced.seenAt }
      : null,
  };
}

/** The reconcile queue as GET /admin/api/queue answers it and the overview reads it. */
export function presentQueue(q: QueueStatus, announced?: AnnouncedLimit) {
  return {
    pending: q.pending,
    total: q.total,
    settling: { count: q.settling.count, nextAt: q.settling.nextAt },
    pendingDeletes: { count: q.pendingDeletes.count, nextAt: q.pendingDeletes.nextAt },
    parked: q.parked,
    oldestEnqueuedAt: q.oldestEnqueuedAt,
    eta: q.eta,
    budget: presentBudget(q.budget, announced),
  };
}

export type BudgetView = ReturnType<typeof presentBudget>;

type QueueDeps = Pick<AdminDataDeps, "db" | "clock" | "budget">;

/** GET /admin/api/budget. */
export async function budgetView(deps: QueueDeps): Promise<BudgetView> {
  const [status, announced] = await Promise.all([
    getBudgetStatus(deps.db, deps.budget, deps.clock.now()),
    scimAnnouncedLimit(deps.db),
  ]);
  return presentBudget(status, announced);
}

/** GET /admin/api/queue and the overview's queue panel. */
export async function queueView(deps: QueueDeps): Promise<ReturnType<typeof presentQueue>> {
  const [status, announced] = await Promise.all([
    queueStatus(deps.db, deps.budget, deps.clock.now()),
    scimAnnouncedLimit(deps.db),
  ]);
  return presentQueue(status, announced);
}
