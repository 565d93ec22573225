import type { Queryable } from "./database.js";
import { isUuid } from "../ids.js";

/** IdP users as the reconciler, the resync and the mapping read them: with their groups, by id or in batches. */

type IdpGroupRef = { id: string; displayName: string; externalId: string | null };

export type IdpUserForReconcile = {
  id: string;
  userName: string;
  active: boolean;
  givenName: string | null;
  familyName: string | null;
  displayName: string | null;
  department: string | null;
  /** Sorted by displayName, then id. */
  groups: IdpGroupRef[];
};

type ReconcileRow = {
  id: string;
  user_name: string;
  active: boolean;
  given_name: string | null;
  family_name: string | null;
  display_name: string | null;
  department: string | null;
  groups: IdpGroupRef[];
};

const RECONCILE_SELECT = `
  SELECT u.id, u.user_name, u.active, u.given_name, u.family_name, u.display_name, u.department,
         COALESCE((SELECT json_agg(json_build_object('id', g.id, 'displayName', g.display_name, 'externalId', g.external_id)
                                   ORDER BY g.display_name, g.id)
                     FROM idp_group_members m JOIN idp_groups g ON g.id = m.group_id
                    WHERE m.user_id = u.id), '[]'::json) AS groups
    FROM idp_users u`;

const toReconcileUser = (r: ReconcileRow): IdpUserForReconcile => ({
  id: r.id,
  userName: r.user_name,
  active: r.active,
  givenName: r.given_name,
  familyName: r.family_name,
  displayName: r.display_name,
  department: r.department,
  groups: r.groups,
});

/** The user with their groups; undefined when the IdP deleted the user (a deprovision). */
export async function getUserForReconcile(q: Queryable, userId: string): Promise<IdpUserForReconcile | undefined> {
  if (!isUuid(userId)) return undefined;
  const rows: ReconcileRow[] = await q.query(`${RECONCILE_SELECT} WHERE u.id = $1`, [userId]);
  return rows[0] && toReconcileUser(rows[0]);
}

/** Users in id order after `afterId` (exclusive; undefined to start), for batch re-derivation. */
export async function listUsersWithGroups(
  q: Queryable,
  afterId: string | undefined,
  limit: number,
): Promise<IdpUserForReconcile[]> {
  const rows: ReconcileRow[] = await q.query(
    `${RECONCILE_SELECT} WHERE ($1::uuid IS NULL OR u.id > $1::uuid) ORDER BY u.id LIMIT $2`,
    [afterId ?? null, limit],
  );
  return rows.map(toReconcileUser);
}

/** Ids of every IdP user in id order after `afterId`, for marking all users dirty in batches. */
export async function listIdpUserIds(q: Queryable, afterId: string | undefined, limit: number): Promise<string[]> {
  const rows: { id: string }[] = await q.query(
    `SELECT id FROM idp_users WHERE ($1::uuid IS NULL OR id > $1::uuid) ORDER BY id LIMIT $2`,
    [afterId ?? null, limit],
  );
  return rows.map((r) => r.id);
}

/** Ids of the members of the groups with these display names (case-insensitive), e.g. after a mapping change. */
export async function listUserIdsInGroupsNamed(q: Queryable, displayNames: string[]): Promise<string[]> {
  if (!displayNames.length) return [];
  const rows: { user_id: string }[] = await q.query(
    `SELECT DISTINCT m.user_id FROM idp_group_members m JOIN idp_groups g ON g.id = m.group_id
      WHERE lower(g.display_name) = ANY($1::text[]) ORDER BY m.user_id`,
    [displayNames.map((n) => n.toLowerCase())],
  );
  return rows.map((r) => r.user_id);
}

/**
 * The user id a userName (email, case-insensitive) refers to: the IdP's user, else the account
 * the connector still holds for a user the IdP deleted (whose next reconcile is a deprovision).
 */
export async function findUserIdByUserName(q: Queryable, userName: string): Promise<string | undefined> {
  const rows: { id: string }[] = await q.query(
    `SELECT id FROM idp_users WHERE lower(user_name) = lower($1)
     UNION ALL
     SELECT user_id FROM platform_accounts WHERE lower(user_name) = lower($1)
     LIMIT 1`,
    [userName],
  );
  return rows[0]?.id;
}
