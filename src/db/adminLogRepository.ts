import type { Database } from "./database.js";
import { logFilterConditions, type LogFilterFields } from "./reconcileLogRepository.js";

/**
 * The reconciliation log as the admin UI reads it: pages by offset (the UI pages by number),
 * filters as admins type them, and the failures that need someone to look.
 */

/** The UI's filter: a userName short of a whole email is a prefix. */
export type AdminLogFilter = LogFilterFields;

export type AdminLogRow = {
  id: string;
  at: Date;
  userId: string | null;
  userName: string | null;
  action: string;
  outcome: string;
  trigger: unknown;
  platformStatus: number | null;
  callsSpent: number;
  error: string | null;
  actor: string | null;
};

type Row = {
  id: string;
  at: Date;
  user_id: string | null;
  user_name: string | null;
  action: string;
  outcome: string;
  trigger: unknown;
  platform_status: number | null;
  calls_spent: number;
  error: string | null;
  actor: string | null;
};

const COLUMNS = `id, at, user_id, user_name, action, outcome, trigger, platform_status, calls_spent, error, actor`;

const mapRow = (r: Row): AdminLogRow => ({
  id: String(r.id),
  at: r.at,
  userId: r.user_id,
  userName: r.user_name,
  action: r.action,
  outcome: r.outcome,
  trigger: r.trigger,
  platformStatus: r.platform_status,
  callsSpent: r.calls_spent,
  error: r.error,
  actor: r.actor,
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Newest first; one page at `offset`, and whether another page follows. */
export async function listLogPage(db: Database, filter: AdminLogFilter, limit: number, offset: number): Promise<{ rows: AdminLogRow[]; hasNext: boolean }> {
  const { conditions, params } = logFilterConditions(filter, { userPrefix: true });
  const sql = conditions.length ? `WHERE ${conditions.join(" AND ")}` : "";
  const rows: Row[] = await db.query(
    `SELECT ${COLUMNS} FROM reconcile_log ${sql} ORDER BY id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
    [...params, limit + 1, Math.max(0, offset)],
  );
  return { rows: rows.slice(0, limit).map(mapRow), hasNext: rows.length > limit };
}

/** One user's latest entries, newest first. */
export async function listUserLog(db: Database, userId: string, limit: number): Promise<AdminLogRow[]> {
  if (!UUID.test(userId)) return [];
  const rows: Row[] = await db.query(`SELECT ${COLUMNS} FROM reconcile_log WHERE user_id = $1 ORDER BY at DESC, id DESC LIMIT $2`, [userId, limit]);
  return rows.map(mapRow);
}

/**
 * Users whose latest reconcile since `since` failed (a later success clears them). Admin entries
 * (approvals, reconcile-now receipts) do not count as that latest reconcile.
 */
export async function listRecentFailures(db: Database, since: Date, limit: number): Promise<AdminLogRow[]> {
  const rows: Row[] = await db.query(
    `SELECT ${COLUMNS} FROM (
        SELECT DISTINCT ON (user_id) ${COLUMNS} FROM reconcile_log
         WHERE at >= $1 AND user_id IS NOT NULL AND action NOT IN ('approve', 'reject', 'reconcile-now')
         ORDER BY user_id, id DESC) latest
      WHERE outcome = 'failed' ORDER BY at DESC LIMIT $2`,
    [since, limit],
  );
  return rows.map(mapRow);
}

/** Parked queue rows (terminal failures kept for an admin) with the user's name when known. */
export async function listParkedWithNames(db: Database, limit: number): Promise<{ userId: string; userName: string | null; error: string | null; parkedAt: Date }[]> {
  const rows: { user_id: string; user_name: string | null; last_error: string | null; parked_at: Date }[] = await db.query(
    `SELECT q.user_id, COALESCE(u.user_name, a.user_name) AS user_name, q.last_error, q.parked_at
       FROM reconcile_queue q
       LEFT JOIN idp_users u ON u.id = q.user_id
       LEFT JOIN platform_accounts a ON a.user_id = q.user_id
      WHERE q.parked_at IS NOT NULL ORDER BY q.parked_at DESC LIMIT $1`,
    [limit],
  );
  return rows.map((r) => ({ userId: r.user_id, userName: r.user_name, error: r.last_error, parkedAt: r.parked_at }));
}

/** Undecided holds by kind. */
export async function countPendingHolds(db: Database): Promise<{ deprovisions: number; emailChanges: number }> {
  const rows: { kind: string; n: number }[] = await db.query(`SELECT kind, count(*)::int AS n FROM reconcile_holds WHERE decision IS NULL GROUP BY kind`);
  const of = (kind: string) => rows.find((r) => r.kind === kind)?.n ?? 0;
  return { deprovisions: of("deprovision"), emailChanges: of("email_change") };
}
