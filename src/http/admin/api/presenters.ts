import type { BudgetStatus } from "../../../db/budgetRepository.js";
import type { Hold } from "../../../db/holdRepository.js";
import type { LogEntry } from "../../../db/reconcileLogRepository.js";
import type { QueueStatus } from "../../../reconcile/queueStatus.js";

/** Records → admin API shapes. */

export const presentLogEntry = (e: LogEntry) => ({
  id: e.id,
  at: e.at.toISOString(),
  reconcileId: e.reconcileId,
  userId: e.userId,
  userName: e.userName,
  action: e.action,
  outcome: e.outcome,
  trigger: e.trigger,
  changes: e.changes,
  before: e.before,
  after: e.after,
  platformStatus: e.platformStatus,
  callsSpent: e.callsSpent,
  error: e.error,
  actor: e.actor,
});

export const presentBudget = (b: BudgetStatus) => ({
  limit: b.limit,
  used: b.used,
  reserve: b.reserve,
  remaining: b.remaining,
  remainingWithReserve: b.remainingWithReserve,
  resetsAt: b.resetsAt.toISOString(),
  window: b.window,
});

export const presentQueue = (q: QueueStatus) => ({
  pending: q.pending,
  total: q.total,
  settling: { count: q.settling.count, nextAt: q.settling.nextAt?.toISOString() ?? null },
  parked: q.parked,
  oldestEnqueuedAt: q.oldestEnqueuedAt?.toISOString() ?? null,
  eta: q.eta?.toISOString() ?? null,
  budget: presentBudget(q.budget),
});

export const presentHold = (h: Hold) => ({
  userId: h.userId,
  kind: h.kind,
  userName: h.userName,
  detail: h.detail,
  createdAt: h.createdAt.toISOString(),
  decision: h.decision,
  decidedBy: h.decidedBy,
  decidedAt: h.decidedAt?.toISOString() ?? null,
});
