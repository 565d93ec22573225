import type { Queryable } from "../database.js";
import { likePrefix } from "../sql.js";
import { isUuid } from "../../ids.js";

/** IdP users as the admin UI lists them: with their platform account and queue state in one row. */

export type AdminUserRow = {
  id: string;
  userName: string;
  active: boolean;
  groups: number;
  accountState: "creating" | "active" | null;
  appliedAt: Date | null;
  queued: boolean;
  /** When a grant held by the settle window goes out (null: none held). */
  settleUntil: Date | null;
  parked: boolean;
  hold: "deprovision" | "email_change" | null;
  /** A stripped account's DELETE, after the grace (null: not stripped, or adopted and never deleted). */
  deleteAfter: Date | null;
  /** Whether the account was stripped (access removed, the account kept). */
  stripped: boolean;
};

type AdminRow = {
  id: string;
  user_name: string;
  active: boolean;
  groups: number;
  account_state: "creating" | "active" | null;
  applied_at: Date | null;
  queued: boolean;
  settle_until: Date | null;
  parked: boolean;
  hold: AdminUserRow["hold"];
  delete_after: Date | null;
  stripped: boolean;
};

const ADMIN_SELECT = `
  SELECT u.id, u.user_name, u.active,
         (SELECT count(*)::int FROM idp_group_members m WHERE m.user_id = u.id) AS groups,
         a.state AS account_state, a.applied_at, a.delete_after, (a.stripped_at IS NOT NULL) AS stripped,
         (q.user_id IS NOT NULL AND q.parked_at IS NULL) AS queued, q.settle_until,
         (q.parked_at IS NOT NULL) AS parked,
         (SELECT h.kind FROM reconcile_holds h WHERE h.user_id = u.id AND h.decision IS NULL) AS hold
    FROM idp_users u
    LEFT JOIN platform_accounts a ON a.user_id = u.id
    LEFT JOIN reconcile_queue q ON q.user_id = u.id`;

const toAdminUserRow = (r: AdminRow): AdminUserRow => ({
  id: r.id,
  userName: r.user_name,
  active: r.active,
  groups: r.groups,
  accountState: r.account_state,
  appliedAt: r.applied_at,
  queued: r.queued,
  settleUntil: r.settle_until,
  parked: r.parked,
  hold: r.hold,
  deleteAfter: r.delete_after,
  stripped: r.stripped === true,
});

/** Users whose userName starts with `prefix` (all users without one), by userName. */
export async function searchUsers(
  db: Queryable,
  prefix: string | undefined,
  limit: number,
  offset: number,
): Promise<{ rows: AdminUserRow[]; hasNext: boolean }> {
  const rows: AdminRow[] = await db.query(
    `${ADMIN_SELECT} WHERE ($1::text IS NULL OR lower(u.user_name) LIKE $1) ORDER BY lower(u.user_name), u.id LIMIT $2 OFFSET $3`,
    [prefix ? likePrefix(prefix) : null, limit + 1, Math.max(0, offset)],
  );
  return { rows: rows.slice(0, limit).map(toAdminUserRow), hasNext: rows.length > limit };
}

export async function getUserRow(db: Queryable, userId: string): Promise<AdminUserRow | undefined> {
  if (!isUuid(userId)) return undefined;
  const rows: AdminRow[] = await db.query(`${ADMIN_SELECT} WHERE u.id = $1`, [userId]);
  return rows[0] && toAdminUserRow(rows[0]);
}

/** The user's name when the connector knows them: in the IdP tables, or by their platform account (a user the IdP deleted). */
export async function knownUserName(db: Queryable, userId: string): Promise<string | undefined> {
  if (!isUuid(userId)) return undefined;
  const rows: { user_name: string | null }[] = await db.query(
    `SELECT COALESCE((SELECT user_name FROM idp_users WHERE id = $1), (SELECT user_name FROM platform_accounts WHERE user_id = $1)) AS user_name`,
    [userId],
  );
  return rows[0]?.user_name ?? undefined;
}

// What the reconciler reads about IdP users: everything the mapping needs to compute the desired
// dashboard user, in one query per user (or per batch for full resyncs).
