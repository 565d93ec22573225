import { listLogPage, type AdminLogFilter, type AdminLogRow } from "../db/adminLogRepository.js";
import { getAccount } from "../db/platformAccountRepository.js";
import { getLogEntry } from "../db/reconcileLogRepository.js";
import { BadRequestError } from "../errors.js";
import type { LogFilter, LogPageData, LogRow } from "../http/admin/ui/pages/log.js";
import type { LogEntryDetail } from "../http/admin/ui/pages/logEntry.js";
import type { AdminDataDeps } from "./deps.js";
import { parseUtcTime, platformCallOf, triggerFacts, triggerLabel } from "./format.js";
import { logEntryTrees } from "./permissionTree.js";

/** The choices of the log's filter selects (the log's vocabulary: src/db/reconcileLogRepository.ts). */
export const LOG_ACTIONS = ["create", "update", "deprovision", "adopt", "verify", "drift", "hold", "needs-admin", "approve", "reject", "reconcile-now", "resync", "mapping"];
export const LOG_OUTCOMES = ["succeeded", "failed", "retrying", "deferred-for-budget", "held", "rejected", "reported"];
export const LOG_TRIGGERS = ["idp", "mapping", "resync", "admin"];

/** Most rows one export returns (newest first). */
export const LOG_EXPORT_CAP = 10_000;

/** The page's filter as the repository takes it; a bad time is the admin's mistake (400). */
export function repositoryFilter(filter: LogFilter): AdminLogFilter {
  try {
    return {
      user: filter.user,
      action: filter.action,
      outcome: filter.outcome,
      trigger: filter.trigger,
      since: parseUtcTime(filter.from, "From"),
      until: parseUtcTime(filter.to, "To"),
    };
  } catch (error) {
    if (error instanceof RangeError) throw new BadRequestError(error.message);
    throw error;
  }
}

export function presentLogRow(r: AdminLogRow): LogRow {
  return {
    id: r.id,
    at: r.at,
    userName: r.userName,
    action: r.action,
    outcome: r.outcome,
    trigger: triggerLabel(r.trigger),
    platformStatus: r.platformStatus,
    callsSpent: r.callsSpent,
    actor: r.actor,
  };
}

export async function logPage(deps: AdminDataDeps, filter: LogFilter, limit: number, offset: number): Promise<LogPageData> {
  const page = await listLogPage(deps.db, repositoryFilter(filter), limit, offset);
  return { rows: page.rows.map(presentLogRow), hasNext: page.hasNext, actions: LOG_ACTIONS, outcomes: LOG_OUTCOMES, triggers: LOG_TRIGGERS };
}

export async function logExport(deps: AdminDataDeps, filter: LogFilter): Promise<LogRow[]> {
  const page = await listLogPage(deps.db, repositoryFilter(filter), LOG_EXPORT_CAP, 0);
  return page.rows.map(presentLogRow);
}

export async function logEntry(deps: AdminDataDeps, id: string): Promise<LogEntryDetail | undefined> {
  if (!/^\d{1,18}$/.test(id)) return undefined; // a bigint id; anything else cannot exist
  const entry = await getLogEntry(deps.db, id);
  if (!entry) return undefined;
  const account = entry.userId ? await getAccount(deps.db, entry.userId) : undefined;
  const trees = logEntryTrees(entry);
  return {
    id: entry.id,
    at: entry.at,
    userId: entry.userId,
    userName: entry.userName,
    action: entry.action,
    outcome: entry.outcome,
    trigger: entry.trigger,
    triggerLabel: triggerLabel(entry.trigger),
    triggerFacts: triggerFacts(entry.trigger),
    // No account is no rows at all (undefined), rather than a "null" value in the diff.
    before: trees.before ?? undefined,
    after: trees.after ?? undefined,
    platformCall: platformCallOf(entry, account?.platformId ?? null),
    callsSpent: entry.callsSpent,
    error: entry.error,
    actor: entry.actor,
  };
}
