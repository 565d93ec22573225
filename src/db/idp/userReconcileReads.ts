import type { Queryable } from "../database.js";
import { isUuid } from "../../ids.js";

/** IdP users as the reconciler, the resync and the mapping read them: with their groups, by id or in batches. */

type IdpGroupRef = { id: string; displayName: string; externalId: string | null };
/** A value the IdP assigned in the user's `roles` or `entitlements` (src/mapping/catalogue.ts). */
type IdpAssignment = { attribute: "roles" | "entitlements"; value: string };

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
  /** The values of the user's roles[] and entitlements[], sorted by attribute, then value. */
  assigned: IdpAssignment[];
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
  assigned: IdpAssignment[];
};

const RECONCILE_SELECT = `
  SELECT u.id, u.user_name, u.active, u.given_name, u.family_name, u.display_name, u.department,
         COALESCE((SELECT json_agg(json_build_object('id', g.id, 'displayName', g.display_name, 'externalId', g.external_id)
                                   ORDER BY g.display_name, g.id)
                     FROM idp_group_members m JOIN idp_groups g ON g.id = m.group_id
                    WHERE m.user_id = u.id), '[]'::json) AS groups,
         COALESCE((SELECT json_agg(json_build_object('attribute', a.attribute, 'value', a.item->>'value')
                                   ORDER BY a.attribute, a.item->>'value')
                     FROM (SELECT 'roles' AS attribute, r AS item
                             FROM jsonb_array_elements(CASE jsonb_typeof(u.resource->'roles') WHEN 'array' THEN u.resource->'roles' ELSE '[]' END) r
                           UNION ALL
                           SELECT 'entitlements', e
                             FROM jsonb_array_elements(CASE jsonb_typeof(u.resource->'entitlements') WHEN 'array' THEN u.resource->'entitlements' ELSE '[]' END) e) a
                    WHERE jsonb_typeof(a.item->'value') = 'string'), '[]'::json) AS assigned
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
  assigned: r.assigned,
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

/**
 * Ids of the users the IdP assigned any of these catalogue values (roles[] or entitlements[],
 * without case), in id order after `afterId`: the users a catalogue change may affect.
 */
export async function listUserIdsAssigned(
  q: Queryable,
  values: string[],
  afterId: string | undefined,
  limit: number,
): Promise<string[]> {
  if (!values.length) return [];
  const rows: { id: string }[] = await q.query(
    `SELECT u.id FROM idp_users u
      WHERE ($2::uuid IS NULL OR u.id > $2::uuid)
        AND EXISTS (SELECT 1 FROM jsonb_array_elements(
                      CASE jsonb_typeof(u.resource->'roles') WHEN 'array' THEN u.resource->'roles' ELSE '[]' END ||
                      CASE jsonb_typeof(u.resource->'entitlements') WHEN 'array' THEN u.resource->'entitlements' ELSE '[]' END) v
                     WHERE lower(v->>'value') = ANY($1::text[]))
      ORDER BY u.id LIMIT $3`,
    [values.map((v) => v.toLowerCase()), afterId ?? null, limit],
  );
  return rows.map((r) => r.id);
}
