/**
 * A campaign's items that no rule of the mapping gives (src/db/campaigns/start.ts freezes the rest):
 *
 * - the accounts made by hand in the platform's dashboard (scope `unmanaged`): one item each, the
 *   whole account (`scope` 'account'), keyed by the account's `account_id` and userName, with what
 *   the lookup found it holding. An account whose removal is decided is left out, unless an admin
 *   refused its delete (it is still there to review);
 * - the grants made in the dashboard and kept (PLATFORM_OUTSIDE_CHANGES=report, platform_outside_changes):
 *   one item per string granted, in every campaign of IdP users whatever its scope (the "put
 *   in the next campaign"), each saying who granted it there and when. The held state's own item
 *   for that string (a legacy state's, one per string) is left out, so it is reviewed once.
 */

/** `g.*` of one account made by hand, as the items' INSERT reads it (`workspace` for the reviewer rules). */
export const UNMANAGED_ITEMS = `
  SELECT u.account_id AS user_id, u.user_name, 'account' AS scope, NULL::text AS workspace, NULL::text AS team,
         'account' AS permission, NULL::jsonb AS bundle,
         jsonb_build_array(jsonb_build_object('unmanaged', jsonb_build_object(
           'addedBy', u.added_by, 'firstSeen', u.first_seen, 'confirmedAt', u.confirmed_at,
           'platformId', u.platform_id, 'permissions', u.permissions))) AS reasons,
         NULL::timestamptz AS log_at, NULL::bigint AS log_id, u.looked_up_at AS last_verified_at
    FROM unmanaged_accounts u
   WHERE u.state = 'confirmed'
     AND NOT EXISTS (SELECT 1 FROM idp_users i WHERE lower(i.user_name) = u.user_name)
     AND (u.removal IS NULL
          OR EXISTS (SELECT 1 FROM reconcile_holds h WHERE h.user_id = u.account_id AND h.decision = 'rejected'))`;

/** Every string, role and set a held state (`h.held`: read once) or an access set carries, one row each. */
export const HELD_STRINGS = `
  SELECT 'company' AS scope, NULL::text AS workspace, NULL::text AS team, p AS permission
    FROM jsonb_array_elements_text(h.held->'companyPermissions') p
  UNION ALL
  SELECT 'role', NULL, NULL, p
    FROM jsonb_array_elements_text(h.held->'roles') p WHERE jsonb_typeof(h.held->'roles') = 'array'
  UNION ALL
  SELECT 'workspace', w->>'appGroupName', NULL, p
    FROM jsonb_array_elements(h.held->'workspaces') w, jsonb_array_elements_text(w->'appGroupPermissions') p
  UNION ALL
  SELECT 'permissionSet', w->>'appGroupName', NULL, p
    FROM jsonb_array_elements(h.held->'workspaces') w, jsonb_array_elements_text(w->'appGroupPermissionSets') p
  UNION ALL
  SELECT 'team', w->>'appGroupName', t->>'teamName', p
    FROM jsonb_array_elements(h.held->'workspaces') w, jsonb_array_elements(w->'team') t,
         jsonb_array_elements_text(t->'teamPermissions') p`;

/** `g.*` of each string granted in the dashboard and kept, on an account the connector holds. */
export const OUTSIDE_ITEMS = `
  SELECT a.user_id, a.user_name, s.scope, s.workspace, s.team, s.permission, NULL::jsonb AS bundle,
         jsonb_build_array(jsonb_build_object('outside', jsonb_build_object(
           'actor', c.actor, 'at', c.at, 'event', c.event))) AS reasons,
         NULL::timestamptz AS log_at, NULL::bigint AS log_id, a.last_verified_at
    FROM platform_outside_changes c
    JOIN platform_accounts a ON a.user_id = c.user_id
   CROSS JOIN LATERAL (SELECT c.granted AS held) h
   CROSS JOIN LATERAL (${HELD_STRINGS}) s
   WHERE c.change = 'permissions' AND c.granted IS NOT NULL AND a.platform_id IS NOT NULL`;

/** The access set holding one grant `g` (for `@>` against a stored set). */
const GRANT_AS_SET = `CASE g.scope
    WHEN 'company' THEN jsonb_build_object('companyPermissions', jsonb_build_array(g.permission))
    WHEN 'role' THEN jsonb_build_object('roles', jsonb_build_array(g.permission))
    WHEN 'workspace' THEN jsonb_build_object('workspaces', jsonb_build_array(jsonb_build_object(
      'appGroupName', g.workspace, 'appGroupPermissions', jsonb_build_array(g.permission))))
    WHEN 'permissionSet' THEN jsonb_build_object('workspaces', jsonb_build_array(jsonb_build_object(
      'appGroupName', g.workspace, 'appGroupPermissionSets', jsonb_build_array(g.permission))))
    ELSE jsonb_build_object('workspaces', jsonb_build_array(jsonb_build_object(
      'appGroupName', g.workspace, 'team', jsonb_build_array(jsonb_build_object(
        'teamName', g.team, 'teamPermissions', jsonb_build_array(g.permission))))))
  END`;

/** A held string (no bundle) that is also an outside item: reviewed there, with who granted it. */
export const NOT_OUTSIDE = `NOT (g.bundle IS NULL AND EXISTS (
    SELECT 1 FROM platform_outside_changes c
     WHERE c.user_id = g.user_id AND c.change = 'permissions' AND c.granted @> ${GRANT_AS_SET}))`;
