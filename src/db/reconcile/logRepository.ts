import { Database, type Queryable } from "../database.js";
import { advanceChainAnchor, appendToChain, canonicalRow, RECONCILE_LOG_CHAIN } from "../auditChain.js";
import type { ExplainedGrant } from "../../mapping/reasons.js";
import type { DesiredDashboardUser } from "../../mapping/types.js";
import type { Change } from "../../reconcile/diff.js";
import type { LogAction, LogOutcome, LogWords } from "../../vocabulary/reconcile.js";
import { logEntryWords } from "./logWords.js";
import { likePrefix } from "../sql.js";
import { isUuid } from "../../ids.js";

/** The reconciliation log: one row per decision, read by admins. */

export type LogEntryInput = LogWords & {
  at: Date;
  reconcileId?: string | null;
  userId?: string | null;
  userName?: string | null;
  action: LogAction;
  trigger?: unknown;
  changes?: Change[];
  before?: DesiredDashboardUser | null;
  after?: DesiredDashboardUser | null;
  /** With a state applied on the platform: why `after` has each grant then (the access report as of a past moment). */
  reasons?: ExplainedGrant[] | null;
  platformStatus?: number | null;
  callsSpent?: number;
  actor?: string | null;
  /** When the change that led to this entry was queued (an IdP change: when the IdP sent it); the evidence pack's latencies. */
  queuedAt?: Date | null;
};

export type LogEntry = {
  id: string;
  at: Date;
  reconcileId: string | null;
  userId: string | null;
  userName: string | null;
  action: LogAction;
  outcome: LogOutcome;
  trigger: unknown;
  changes: Change[];
  before: DesiredDashboardUser | null;
  after: DesiredDashboardUser | null;
  platformStatus: number | null;
  callsSpent: number;
  /** Why the entry did not happen as asked (its outcome failed or is retrying); null for any other. */
  error: string | null;
  /** What an admin should know of an entry that did not fail ("access removed: …", "held: …"). */
  note: string | null;
  actor: string | null;
};

type Row = {
  id: string;
  at: Date;
  reconcile_id: string | null;
  user_id: string | null;
  user_name: string | null;
  action: LogAction;
  outcome: LogOutcome;
  trigger: unknown;
  changes: Change[];
  before: DesiredDashboardUser | null;
  after: DesiredDashboardUser | null;
  platform_status: number | null;
  calls_spent: number;
  error: string | null;
  note: string | null;
  actor: string | null;
};

/** An entry without its reconcile id and payloads: what the admin UI's lists show. */
export type LogSummary = Omit<LogEntry, "reconcileId" | "changes" | "before" | "after">;
type SummaryRow = Omit<Row, "reconcile_id" | "changes" | "before" | "after">;
const SUMMARY_COLUMNS = `id, at, user_id, user_name, action, outcome, trigger, platform_status, calls_spent, error, note, actor`;

const mapSummary = (r: SummaryRow): LogSummary => ({
  id: r.id,
  at: r.at,
  userId: r.user_id,
  userName: r.user_name,
  action: r.action,
  outcome: r.outcome,
  trigger: r.trigger,
  platformStatus: r.platform_status,
  callsSpent: r.calls_spent,
  ...logEntryWords(r),
  actor: r.actor,
});

const mapEntry = (r: Row): LogEntry => ({
  ...mapSummary(r),
  reconcileId: r.reconcile_id,
  changes: r.changes,
  before: r.before,
  after: r.after,
});

/**
 * Appends an entry to the log and to its hash chain, in the caller's transaction (or in one of its
 * own when handed the Database), so no entry is written outside the chain.
 */
export async function writeLogEntry(db: Database | Queryable, e: LogEntryInput): Promise<void> {
  if (db instanceof Database) return db.transaction((tx) => writeLogEntry(tx, e));
  await appendToChain(db, RECONCILE_LOG_CHAIN, async () => {
    const [row] = await db.query<Record<string, unknown> & { id: string }>(
      `INSERT INTO reconcile_log (at, reconcile_id, user_id, user_name, action, outcome, trigger, changes, before, after, platform_status, calls_spent, error, note, actor, reasons, queued_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) RETURNING *`,
      [
        e.at,
        e.reconcileId ?? null,
        e.userId ?? null,
        e.userName ?? null,
        e.action,
        e.outcome,
        JSON.stringify(e.trigger ?? {}),
        JSON.stringify(e.changes ?? []),
        e.before ? JSON.stringify(e.before) : null,
        e.after ? JSON.stringify(e.after) : null,
        e.platformStatus ?? null,
        e.callsSpent ?? 0,
        e.error ? e.error.slice(0, 2000) : null,
        e.note ? e.note.slice(0, 2000) : null,
        e.actor ?? null,
        e.reasons ? JSON.stringify(e.reasons) : null,
        e.queuedAt ?? null,
      ],
    );
    return { id: row!.id, canonical: canonicalRow(row!) };
  });
}

/** What the log can be filtered on, by the admin API and the admin UI alike. */
export type LogFilterFields = {
  /** A user id, or a userName (case-insensitive). */
  user?: string;
  action?: string;
  outcome?: string;
  /** The trigger's kind: idp, mapping, resync, admin. */
  trigger?: string;
  since?: Date;
  until?: Date;
};

const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;

/**
 * The filter as parameterised conditions. `user` is an id or a whole userName; with
 * `userPrefix`, anything short of a whole email is a userName prefix (how admins type in the UI).
 */
function logFilterConditions(
  filter: LogFilterFields,
  options: { userPrefix?: boolean } = {},
): { conditions: string[]; params: unknown[] } {
  const conditions: string[] = [];
  const params: unknown[] = [];
  const add = (sql: string, value: unknown) => {
    params.push(value);
    conditions.push(sql.replaceAll("$?", `$${params.length}`));
  };
  if (filter.user && isUuid(filter.user)) add(`user_id = $?::uuid`, filter.user);
  // A whole email is an exact match (the user_name index serves it).
  else if (filter.user && (!options.userPrefix || EMAIL.test(filter.user)))
    add(`lower(user_name) = lower($?)`, filter.user);
  else if (filter.user) add(`lower(user_name) LIKE $?`, likePrefix(filter.user));
  if (filter.action) add(`action = $?`, filter.action);
  if (filter.outcome) add(`outcome = $?`, filter.outcome);
  if (filter.trigger) add(`trigger->>'kind' = $?`, filter.trigger);
  if (filter.since) add(`at >= $?`, filter.since);
  if (filter.until) add(`at < $?`, filter.until);
  return { conditions, params };
}

export type LogFilter = LogFilterFields & {
  /** id of the last entry of the previous page (entries come newest first) */
  before?: string;
  limit?: number;
};

/** Newest first; `before` is a cursor (the id of the last entry already seen). */
export async function listLog(
  db: Database,
  filter: LogFilter,
): Promise<{ entries: LogEntry[]; nextCursor: string | null }> {
  const { conditions: where, params } = logFilterConditions(filter);
  if (filter.before && /^\d+$/.test(filter.before)) {
    params.push(filter.before);
    where.push(`id < $${params.length}`);
  }
  const limit = Math.min(Math.max(filter.limit ?? 50, 1), 1000);
  params.push(limit + 1);
  const rows: Row[] = await db.query(
    `SELECT * FROM reconcile_log ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY id DESC LIMIT $${params.length}`,
    params,
  );
  const entries = rows.slice(0, limit).map(mapEntry);
  return { entries, nextCursor: rows.length > limit ? entries[entries.length - 1]!.id : null };
}

/** The admin UI's list (it pages by number): newest first, one page at `offset`, and whether another page follows. */
export async function listLogPage(
  db: Database,
  filter: LogFilterFields,
  limit: number,
  offset: number,
): Promise<{ rows: LogSummary[]; hasNext: boolean }> {
  const { conditions, params } = logFilterConditions(filter, { userPrefix: true });
  const sql = conditions.length ? `WHERE ${conditions.join(" AND ")}` : "";
  const rows: SummaryRow[] = await db.query(
    `SELECT ${SUMMARY_COLUMNS} FROM reconcile_log ${sql} ORDER BY id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
    [...params, limit + 1, Math.max(0, offset)],
  );
  return { rows: rows.slice(0, limit).map(mapSummary), hasNext: rows.length > limit };
}

/** One user's latest entries, newest first. */
export async function listUserLog(db: Database, userId: string, limit: number): Promise<LogSummary[]> {
  if (!isUuid(userId)) return [];
  const rows: SummaryRow[] = await db.query(
    `SELECT ${SUMMARY_COLUMNS} FROM reconcile_log WHERE user_id = $1 ORDER BY at DESC, id DESC LIMIT $2`,
    [userId, limit],
  );
  return rows.map(mapSummary);
}

/**
 * Users whose latest reconcile since `since` failed (a later success clears them). Admin entries
 * (approvals, reconcile-now receipts) do not count as that latest reconcile.
 */
export async function listRecentFailures(db: Database, since: Date, limit: number): Promise<LogSummary[]> {
  const rows: SummaryRow[] = await db.query(
    `SELECT ${SUMMARY_COLUMNS} FROM (
        SELECT DISTINCT ON (user_id) ${SUMMARY_COLUMNS} FROM reconcile_log
         WHERE at >= $1 AND user_id IS NOT NULL AND action NOT IN ('approve', 'reject', 'reconcile-now')
         ORDER BY user_id, id DESC) latest
      WHERE outcome = 'failed' ORDER BY at DESC LIMIT $2`,
    [since, limit],
  );
  return rows.map(mapSummary);
}

export async function getLogEntry(db: Database, id: string): Promise<LogEntry | undefined> {
  return (await getLogEntryWithReasons(db, id))?.entry;
}

/**
 * An entry, and why the state it applied had each grant then, as the reconciler recorded it
 * (null: none recorded): the entry page's one read of the row.
 */
export async function getLogEntryWithReasons(
  db: Queryable,
  id: string,
): Promise<{ entry: LogEntry; reasons: ExplainedGrant[] | null } | undefined> {
  if (!/^\d+$/.test(id)) return undefined;
  const rows: (Row & { reasons: ExplainedGrant[] | null })[] = await db.query(
    `SELECT * FROM reconcile_log WHERE id = $1`,
    [id],
  );
  return rows[0] && { entry: mapEntry(rows[0]), reasons: rows[0].reasons };
}

/** Successful deprovisions since `since` (the mass-deprovision breaker's rate). */
export async function countDeprovisionsSince(db: Queryable, since: Date): Promise<number> {
  const rows: { n: number }[] = await db.query(
    `SELECT count(*)::int AS n FROM reconcile_log WHERE action = 'deprovision' AND outcome = 'succeeded' AND at >= $1`,
    [since],
  );
  return rows[0]?.n ?? 0;
}

/**
 * Deletes the log's oldest entries, up to the first one at or after `cutoff` (the chain loses only
 * its start), and moves the chain's anchor past them in the same transaction.
 */
export async function deleteLogOlderThan(db: Database, cutoff: Date): Promise<number> {
  return db.transaction(async (tx) => {
    const [last] = await tx.query<{ id: string | null }>(
      `SELECT max(id)::text AS id FROM reconcile_log
        WHERE id < coalesce((SELECT min(id) FROM reconcile_log WHERE at >= $1), 9223372036854775807)`,
      [cutoff],
    );
    if (!last?.id) return 0;
    await tx.query(`SELECT 1 FROM audit_chains WHERE name = $1 FOR UPDATE`, [RECONCILE_LOG_CHAIN.chain]);
    await advanceChainAnchor(tx, RECONCILE_LOG_CHAIN, last.id);
    return tx.execute(`DELETE FROM reconcile_log WHERE id <= $1`, [last.id]);
  });
}
