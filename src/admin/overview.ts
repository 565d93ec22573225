import { callsPerDay } from "../db/reconcile/budgetRepository.js";
import { NotFoundError } from "../errors.js";
import { actorForLog, type AdminActor } from "./adminActor.js";
import { countPendingHolds } from "../db/reconcile/holdRepository.js";
import { listRecentFailures } from "../db/reconcile/logRepository.js";
import { listParkedWithNames } from "../db/reconcile/queueReads.js";
import { countHeldForLegacy, getPermissionModelState } from "../db/platform/identifierRepository.js";
import { mirrorLag } from "../mirror/status.js";
import { windowStart } from "../reconcile/budget/budget.js";
import type { AdminDataDeps } from "./deps.js";
import type { Mapping } from "../mapping/compiled.js";
import { etaText, formatTime } from "./format.js";
import { presentQuarantine, type QuarantineRow } from "./quarantineView.js";
import { queueView, type BudgetView } from "./queue.js";
import type { RunView } from "./runs/runs.js";

/** What the overview shows. */
export type OverviewData = {
  budget: Pick<BudgetView, "used" | "reserve" | "limit" | "resetsAt"> & {
    platformAnnounced?: BudgetView["platformAnnounced"];
  };
  /** Oldest first, normally the last 14 days; `byAction` e.g. { deprovision: 3, create: 10 }. */
  callsPerDay: { day: string; byAction: Record<string, number> }[];
  /** `settling`: of `depth`, grants waiting for the user to be quiet (docs/reconciler.md, settle window). */
  queue: { priority: string; depth: number; settling: number }[];
  /** Grants waiting to settle, and when the next one goes out. */
  settling?: { count: number; nextAt: Date | null };
  /** Stripped accounts waiting for the grace to end before their DELETE. */
  pendingDeletes?: { count: number; nextAt: Date | null };
  /** e.g. "about 2 days at today's pace"; undefined when the queue is empty. */
  queueEta?: string;
  failures: { userId?: string; userName: string; error: string; at: Date }[];
  held: { deprovisions: number; emailChanges: number };
  mirrorLag: { table: string; pending: number; lagSeconds: number | null }[];
  lastRuns: RunView[];
  /** Platform families whose work is paused (platform/quarantine.ts); empty when none. */
  quarantine: QuarantineRow[];
  permissions: PermissionModelView;
  /** "this replica's mapping file differs from the mapping in force (version …)…", when it does. */
  mappingNotice?: string;
};

/**
 * The platform's permission model as the connector sees it: which model the mapping speaks, which
 * one the platform's answers show (learned from them, at no cost), and whether it refuses legacy
 * strings (then grants carrying them are held until the mapping is migrated).
 */
export type PermissionModelView = {
  mapping: "legacy" | "granular";
  platform: "granular" | "legacy" | "not seen yet";
  /** When an answer last showed that model. */
  learnedAt: Date | null;
  refusing: { since: Date; value: string | null; detail: string | null } | null;
  heldGrants: number;
};

const DAY_MS = 86_400_000;
const CHART_DAYS = 14;
const FAILURES_SHOWN = 20;

/** The overview: today's budget, 14 days of calls, the queue and its ETA, what needs attention. */
export async function overviewData(deps: AdminDataDeps): Promise<OverviewData> {
  const { db } = deps;
  const now = deps.clock.now();
  const shown = await deps.desired.shown(db);
  const [queue, calls, held, parked, failed, mirror, runs, quarantined, permissions] = await Promise.all([
    queueView(deps),
    callsPerDay(db, new Date(windowStart(now, "utc-day").getTime() - (CHART_DAYS - 1) * DAY_MS), now),
    countPendingHolds(db),
    listParkedWithNames(db, FAILURES_SHOWN),
    listRecentFailures(db, new Date(now.getTime() - 7 * DAY_MS), FAILURES_SHOWN),
    mirrorLag(db, now),
    deps.resync.latest(5),
    deps.quarantine.list(),
    permissionModelView(db, shown.mapping),
  ]);
  const parkedUsers = new Set(parked.map((p) => p.userId));
  const failures = [
    ...parked.map((p) => ({
      userId: p.userId,
      userName: p.userName ?? p.userId,
      error: `parked: ${p.error ?? "terminal failure"}`,
      at: p.parkedAt,
    })),
    ...failed
      .filter((f) => f.userId && !parkedUsers.has(f.userId))
      .map((f) => ({
        userId: f.userId ?? undefined,
        userName: f.userName ?? f.userId ?? "—",
        error: `${f.action} failed: ${f.error ?? "no detail"}`,
        at: f.at,
      })),
  ]
    .sort((a, b) => b.at.getTime() - a.at.getTime())
    .slice(0, FAILURES_SHOWN);
  return {
    budget: {
      used: queue.budget.used,
      reserve: queue.budget.reserve,
      limit: queue.budget.limit,
      resetsAt: queue.budget.resetsAt,
      platformAnnounced: queue.budget.platformAnnounced,
    },
    callsPerDay: chartDays(now, calls),
    queue: queueByPriority(queue.pending),
    settling: queue.settling,
    pendingDeletes: queue.pendingDeletes,
    queueEta: etaText(now, queue.eta, formatTime),
    failures,
    held,
    mirrorLag: mirror,
    lastRuns: runs,
    quarantine: quarantined.map(presentQuarantine),
    permissions,
    ...(shown.fileDiffers ? { mappingNotice: shown.fileDiffers } : {}),
  };
}

/** The overview's permission-model panel, and `GET /admin/api/permissions`. */
export async function permissionModelView(
  db: AdminDataDeps["db"],
  mapping: Pick<Mapping, "permissionModel">,
): Promise<PermissionModelView> {
  const [model, heldGrants] = await Promise.all([getPermissionModelState(db), countHeldForLegacy(db)]);
  return {
    mapping: mapping.permissionModel,
    ...platformModel(model),
    refusing: model.legacyRefusedAt
      ? { since: model.legacyRefusedAt, value: model.refusedValue, detail: model.refusedDetail }
      : null,
    heldGrants,
  };
}

/** The model of the platform's latest answers: granular once any answer showed granular strings after the last legacy one. */
function platformModel(state: {
  granularSeenAt: Date | null;
  legacySeenAt: Date | null;
}): Pick<PermissionModelView, "platform" | "learnedAt"> {
  const { granularSeenAt: g, legacySeenAt: l } = state;
  if (!g && !l) return { platform: "not seen yet", learnedAt: null };
  if (g && (!l || g >= l)) return { platform: "granular", learnedAt: g };
  return { platform: "legacy", learnedAt: l };
}

/** The resume button: lifts the quarantine; the quarantine logs who did it. */
export async function resumeFamily(
  quarantine: AdminDataDeps["quarantine"],
  family: string,
  actor: AdminActor,
): Promise<string> {
  const row = await quarantine.resume(family, `${actor.via}:${actorForLog(actor.name)}`);
  if (!row) throw new NotFoundError(`The ${family} family is not quarantined.`);
  return `Resumed ${family}: workers claim its work again.`;
}

/** Every one of the last 14 UTC days, oldest first, days without calls included (none at all: empty). */
export function chartDays(
  now: Date,
  rows: { day: string; action: string; calls: number }[],
): OverviewData["callsPerDay"] {
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
