import { callsPerDay } from "../db/budgetRepository.js";
import { NotFoundError } from "../errors.js";
import { actorForLog, type AdminActor } from "../http/admin/actor.js";
import { countPendingHolds, listParkedWithNames, listRecentFailures } from "../db/adminLogRepository.js";
import { mirrorLag } from "../mirror/status.js";
import { queueStatus } from "../reconcile/queueStatus.js";
import { formatTime } from "../http/admin/ui/components/basics.js";
import type { OverviewData } from "../http/admin/ui/pages/overview.js";
import type { AdminDataDeps } from "./deps.js";
import { etaText } from "./format.js";
import { presentQuarantine } from "./quarantine.js";
import { lastRuns } from "./runs.js";

const DAY_MS = 86_400_000;
const CHART_DAYS = 14;
const FAILURES_SHOWN = 20;

/** The overview: today's budget, 14 days of calls, the queue and its ETA, what needs attention. */
export async function overviewData(deps: AdminDataDeps): Promise<OverviewData> {
  const { db } = deps;
  const now = deps.clock.now();
  const [queue, calls, held, parked, failed, mirror, runs, quarantined] = await Promise.all([
    queueStatus(db, deps.budget, now),
    callsPerDay(db, now, CHART_DAYS),
    countPendingHolds(db),
    listParkedWithNames(db, FAILURES_SHOWN),
    listRecentFailures(db, new Date(now.getTime() - 7 * DAY_MS), FAILURES_SHOWN),
    mirrorLag(db, now),
    lastRuns(deps),
    deps.quarantine.list(),
  ]);
  const parkedUsers = new Set(parked.map((p) => p.userId));
  const failures = [
    ...parked.map((p) => ({ userId: p.userId, userName: p.userName ?? p.userId, error: `parked: ${p.error ?? "terminal failure"}`, at: p.parkedAt })),
    ...failed
      .filter((f) => f.userId && !parkedUsers.has(f.userId))
      .map((f) => ({ userId: f.userId ?? undefined, userName: f.userName ?? f.userId ?? "—", error: `${f.action} failed: ${f.error ?? "no detail"}`, at: f.at })),
  ]
    .sort((a, b) => b.at.getTime() - a.at.getTime())
    .slice(0, FAILURES_SHOWN);
  return {
    budget: { used: queue.budget.used, reserve: queue.budget.reserve, limit: queue.budget.limit, resetsAt: queue.budget.resetsAt },
    callsPerDay: chartDays(now, calls),
    queue: queueByPriority(queue.pending),
    settling: queue.settling,
    queueEta: etaText(now, queue.eta, formatTime),
    failures,
    held,
    mirrorLag: mirror,
    lastRuns: runs,
    quarantine: quarantined.map(presentQuarantine),
  };
}

/** The resume button: lifts the quarantine; the quarantine logs who did it. */
export async function resumeFamily(quarantine: AdminDataDeps["quarantine"], family: string, actor: AdminActor): Promise<string> {
  const row = await quarantine.resume(family, `${actor.via}:${actorForLog(actor.name)}`);
  if (!row) throw new NotFoundError(`The ${family} family is not quarantined.`);
  return `Resumed ${family}: workers claim its work again.`;
}

/** Every one of the last 14 UTC days, oldest first, days without calls included (none at all: empty). */
export function chartDays(now: Date, rows: { day: string; action: string; calls: number }[]): OverviewData["callsPerDay"] {
  if (!rows.length) return []; // the page says "no platform calls yet" rather than drawing 14 empty days
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return Array.from({ length: CHART_DAYS }, (_, i) => {
    const day = new Date(today - (CHART_DAYS - 1 - i) * DAY_MS).toISOString().slice(0, 10);
    const byAction: Record<string, number> = {};
    for (const r of rows) if (r.day === day) byAction[r.action] = (byAction[r.action] ?? 0) + r.calls;
    return { day, byAction };
  });
}

function queueByPriority(pending: { name: string; count: number; settling: number }[]): OverviewData["queue"] {
  const depth = new Map<string, { depth: number; settling: number }>();
  for (const p of pending) {
    const row = depth.get(p.name) ?? { depth: 0, settling: 0 };
    depth.set(p.name, { depth: row.depth + p.count, settling: row.settling + p.settling });
  }
  return [...depth.entries()].map(([priority, n]) => ({ priority, ...n }));
}
