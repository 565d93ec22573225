import { getAccount } from "../db/platform/accountRepository.js";
import {
  getLogEntry,
  getLogEntryWithReasons,
  listLog,
  listLogPage,
  type LogEntry,
  type LogFilterFields,
  type LogSummary,
} from "../db/reconcile/logRepository.js";
import { BadRequestError } from "../errors.js";
import { LOG_ACTIONS, LOG_OUTCOMES, TRIGGER_KINDS, triggerFacts, triggerLabel } from "../vocabulary/reconcile.js";
import type { AdminDataDeps } from "./deps.js";
import { parseUtcTime, platformCallOf } from "./format.js";
import { logEntryTrees } from "./mapping/permissionTree.js";
import { permissionBundles, type PermissionBundle } from "./mapping/permissionBundles.js";
import { describeReason } from "../review/access/grants.js";
import { grantWords } from "../reconcile/desiredSource.js";

/** Filters as they arrive in the query string; all optional. `from`/`to` are datetime-local values (UTC). */
export type LogFilter = {
  user?: string;
  action?: string;
  outcome?: string;
  trigger?: string;
  from?: string;
  to?: string;
  page: number;
};

/**
 * A log entry's row on the Log page, the user's page and in the export (CSV and JSON): the
 * columns of `presentLogEntry`, with the trigger in words under `trigger` (the export's
 * documented column). The list reads no changes, before or after, so a row is projected from
 * those columns alone.
 */
export type LogRow = {
  id: string;
  at: Date;
  userName: string | null;
  action: string;
  outcome: string;
  /** Short human label of what woke the reconcile, e.g. "IdP PATCH Groups/…", "resync", "mapping". */
  trigger: string;
  platformStatus: number | null;
  callsSpent: number;
  actor: string | null;
};

export type LogPageData = {
  rows: LogRow[];
  hasNext: boolean;
  /** Choices for the filter selects. */
  actions: string[];
  outcomes: string[];
  triggers: string[];
};

/**
 * A reconciliation log entry as the admin surfaces show it: GET /admin/api/log and
 * /admin/api/log/:id answer this shape (`res.json` sends the dates as ISO strings); the entry page
 * adds its words to it (`logEntry`) and the list rows are projected from its columns (`LogRow`).
 * `trigger` is what woke the reconcile as stored (e.g. {"kind":"idp","requestId":"…","method":"PATCH"}).
 */
export function presentLogEntry(e: LogEntry) {
  return {
    id: e.id,
    at: e.at,
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
    note: e.note,
    actor: e.actor,
  };
}

type LogEntryView = ReturnType<typeof presentLogEntry>;

/**
 * The entry page: the presented entry with its words. `before`/`after` become permission trees
 * (the desired dashboard users, as the diff view draws them; no account is no tree at all).
 */
export type LogEntryDetail = Omit<LogEntryView, "before" | "after"> & {
  triggerLabel: string;
  /** The ids behind the words (group, IdP request, rule, run), each with the page it links to. */
  triggerFacts: { label: string; value: string; page?: "mapping" | "runs" }[];
  before: unknown;
  after: unknown;
  platformCall: { method: string; path: string; status: number | null } | null;
  /**
   * Why the state applied had each grant, in words, as recorded then: "EU Production: … —
   * assigned role Marketer – Fashion Brands in Okta (catalogue 'marketer', mapping.yaml:40)".
   */
  why: string[];
  /** The granular bundles of the state applied, as recorded then: the diff draws each as one row. */
  bundles?: PermissionBundle[];
};

/** The choices of the log's filter selects: the log's vocabulary (src/vocabulary/reconcile.ts). */
const LOG_ACTION_CHOICES: string[] = [...LOG_ACTIONS];
const LOG_OUTCOME_CHOICES: string[] = [...LOG_OUTCOMES];
const LOG_TRIGGER_CHOICES: string[] = [...TRIGGER_KINDS];

/** Most rows one export returns (newest first). */
const LOG_EXPORT_CAP = 10_000;

/** The page's filter as the repository takes it; a bad time is the admin's mistake (400). */
function repositoryFilter(filter: LogFilter): LogFilterFields {
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

/** A list row from the columns the list reads (a `LogSummary`, or a presented entry). */
export function presentLogRow(r: Pick<LogSummary, keyof LogRow>): LogRow {
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

export async function logPage(
  deps: AdminDataDeps,
  filter: LogFilter,
  limit: number,
  offset: number,
): Promise<LogPageData> {
  const page = await listLogPage(deps.db, repositoryFilter(filter), limit, offset);
  return {
    rows: page.rows.map(presentLogRow),
    hasNext: page.hasNext,
    actions: LOG_ACTION_CHOICES,
    outcomes: LOG_OUTCOME_CHOICES,
    triggers: LOG_TRIGGER_CHOICES,
  };
}

export async function logExport(deps: AdminDataDeps, filter: LogFilter): Promise<LogRow[]> {
  const page = await listLogPage(deps.db, repositoryFilter(filter), LOG_EXPORT_CAP, 0);
  return page.rows.map(presentLogRow);
}

/** The JSON API's filters (GET /admin/api/log): ISO times, and a cursor rather than a page number. */
export type LogQuery = Omit<LogFilter, "from" | "to" | "page"> & {
  since?: string;
  until?: string;
  cursor?: string;
  limit?: number;
};

/** GET /admin/api/log: presented entries, newest first, and the cursor of the next page. */
export async function logEntries(
  deps: Pick<AdminDataDeps, "db">,
  q: LogQuery,
): Promise<{ entries: LogEntryView[]; nextCursor: string | null }> {
  const page = await listLog(deps.db, {
    ...q,
    since: q.since ? new Date(q.since) : undefined,
    until: q.until ? new Date(q.until) : undefined,
    before: q.cursor,
  });
  return { entries: page.entries.map(presentLogEntry), nextCursor: page.nextCursor };
}

/** One entry as the JSON API presents it; undefined when no entry has that id. */
export async function logEntryView(deps: Pick<AdminDataDeps, "db">, id: string): Promise<LogEntryView | undefined> {
  const entry = await findEntry(deps, id);
  return entry && presentLogEntry(entry);
}

/** A bigint id; anything else cannot exist (and is not sent to PostgreSQL). */
async function findEntry(deps: Pick<AdminDataDeps, "db">, id: string): Promise<LogEntry | undefined> {
  if (!/^\d{1,18}$/.test(id)) return undefined;
  return getLogEntry(deps.db, id);
}

export async function logEntry(deps: AdminDataDeps, id: string): Promise<LogEntryDetail | undefined> {
  // A bigint id; anything else cannot exist (and is not sent to PostgreSQL).
  const found = /^\d{1,18}$/.test(id) ? await getLogEntryWithReasons(deps.db, id) : undefined;
  if (!found) return undefined;
  const { entry, reasons } = found;
  const account = entry.userId ? await getAccount(deps.db, entry.userId) : undefined;
  const trees = logEntryTrees(entry);
  return {
    ...presentLogEntry(entry),
    triggerLabel: triggerLabel(entry.trigger),
    triggerFacts: triggerFacts(entry.trigger),
    // No account is no rows at all (undefined), rather than a "null" value in the diff.
    before: trees.before ?? undefined,
    after: trees.after ?? undefined,
    platformCall: platformCallOf(entry, account?.platformId ?? null),
    bundles: permissionBundles(reasons ?? []),
    why: (reasons ?? []).map((g) => `${grantWords(g)} — ${g.reasons.map(describeReason).join("; ") || "no rule"}`),
  };
}
