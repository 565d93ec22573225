/**
 * The applied states bench:campaign seeds (bench/campaign.ts), as SQL over `generate_series(1, N) n`:
 * user n in the legacy model (5 strings) and in the granular model (136 strings, a set, a role),
 * each with the log entry's reasons of its own (the user's group's name and id), and their seeding
 * (`seedWorld`, also used by bench/campaign-freeze.ts).
 */
import { BASIC_ACCESS_GRANULAR } from "../../src/vocabulary/permissions.js";
import { bundleLabel } from "../../src/mapping/reasons.js";
import type { Database } from "../../src/db/database.js";

/** One world of applied states: the SQL of user n's state and of its log entry's reasons. */
export type World = { name: string; applied: string; reasons: string; strings: string; params: unknown[] };

/** The reasons the reconciler records with the applied state: one rule and group per user (`reason`). */
const RULE_REASON = `jsonb_build_array(jsonb_build_object(
      'rule', jsonb_build_object('index', n % 20, 'line', 4 + 8 * (n % 20), 'file', 'mapping.yaml', 'description', 'Team family ' || n % 20),
      'groups', jsonb_build_array(format('Team-%s', lpad(n::text, 6, '0'))), 'groupIds', jsonb_build_array(md5('group' || n)::uuid)))`;

/** User n, legacy: 3 grants in one workspace (2 permissions, a team's), 2 in another (1 permission, a permission set). */
export const LEGACY: World = {
  name: "legacy",
  applied: `jsonb_build_object(
  'userName', format('user%s@example.com', n), 'department', 'engineering', 'companyPermissions', '[]'::jsonb,
  'workspaces', jsonb_build_array(
    jsonb_build_object('appGroupName', 'Workspace ' || n % 5, 'appGroupPermissions', '["basic_access","export_user_data"]'::jsonb,
      'appGroupPermissionSets', '[]'::jsonb,
      'team', jsonb_build_array(jsonb_build_object('teamName', 'Team ' || n % 20, 'teamPermissions', '["basic_access"]'::jsonb))),
    jsonb_build_object('appGroupName', 'Workspace ' || (n + 1) % 5, 'appGroupPermissions', '["basic_access"]'::jsonb,
      'appGroupPermissionSets', '["Analysts"]'::jsonb, 'team', '[]'::jsonb)))`,
  reasons: `(SELECT jsonb_agg(jsonb_build_object('scope', g.scope, 'workspace', g.workspace, 'team', g.team, 'permission', g.permission,
    'reasons', ${RULE_REASON}))
  FROM (VALUES
    ('workspace', 'Workspace ' || n % 5, NULL, 'basic_access'),
    ('workspace', 'Workspace ' || n % 5, NULL, 'export_user_data'),
    ('team', 'Workspace ' || n % 5, 'Team ' || n % 20, 'basic_access'),
    ('workspace', 'Workspace ' || (n + 1) % 5, NULL, 'basic_access'),
    ('permissionSet', 'Workspace ' || (n + 1) % 5, NULL, 'Analysts')) AS g(scope, workspace, team, permission))`,
  strings: "5",
  params: [],
};

/** basic_access + send_campaigns_canvases in granular strings (45), and with export_user_data (the operator's string for "Export User Data"). */
const FORTY_FIVE = [...BASIC_ACCESS_GRANULAR, "launch_campaigns", "launch_canvases"].sort();
const FORTY_SIX = [...FORTY_FIVE, "export_user_data"].sort();

/** A bundle's name as `explainGrants` stores it (src/mapping/reasons.ts `bundleLabel`), in SQL. */
const label = `format('rule ''%s''', 'Team family ' || n % 20)`;
if (bundleLabel({ index: 0, description: "Team family 0" }) !== "rule 'Team family 0'")
  throw new Error("bundleLabel changed: update the bench's seeded bundle names");

/**
 * User n, granular, the same access in the granular model: 46 strings in one workspace and 45 in its
 * team, 45 in another workspace, a permission set in a third (a set excludes permissions there), a
 * role. Its log entry's reasons are bundles, as src/mapping/reasons.ts `explainGrants` stores them.
 */
export const GRANULAR: World = {
  name: "granular",
  applied: `jsonb_build_object(
  'userName', format('user%s@example.com', n), 'department', 'engineering', 'companyPermissions', '[]'::jsonb,
  'roles', '["Marketer"]'::jsonb, 'permissionModel', 'granular',
  'workspaces', jsonb_build_array(
    jsonb_build_object('appGroupName', 'Workspace ' || n % 5, 'appGroupPermissions', $3::jsonb, 'appGroupPermissionSets', '[]'::jsonb,
      'team', jsonb_build_array(jsonb_build_object('teamName', 'Team ' || n % 20, 'teamPermissions', $4::jsonb))),
    jsonb_build_object('appGroupName', 'Workspace ' || (n + 1) % 5, 'appGroupPermissions', $4::jsonb,
      'appGroupPermissionSets', '[]'::jsonb, 'team', '[]'::jsonb),
    jsonb_build_object('appGroupName', 'Workspace ' || (n + 2) % 5, 'appGroupPermissions', '[]'::jsonb,
      'appGroupPermissionSets', '["Analysts"]'::jsonb, 'team', '[]'::jsonb)))`,
  reasons: `(SELECT jsonb_agg(jsonb_build_object('scope', g.scope, 'workspace', g.workspace, 'team', g.team, 'permission', g.permission,
    'reasons', ${RULE_REASON}) || CASE WHEN g.bundle IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('bundle', g.bundle) END)
  FROM (VALUES
    ('role', NULL, NULL, 'Marketer', NULL::jsonb),
    ('workspace', 'Workspace ' || n % 5, NULL, ${label}, $3::jsonb),
    ('team', 'Workspace ' || n % 5, 'Team ' || n % 20, ${label}, $4::jsonb),
    ('workspace', 'Workspace ' || (n + 1) % 5, NULL, ${label}, $4::jsonb),
    ('permissionSet', 'Workspace ' || (n + 2) % 5, NULL, 'Analysts', NULL)) AS g(scope, workspace, team, permission, bundle))`,
  strings: `${FORTY_SIX.length + 2 * FORTY_FIVE.length} strings + a set + a role`,
  params: [JSON.stringify(FORTY_SIX), JSON.stringify(FORTY_FIVE)],
};

/**
 * Seeds `users` accounts in `world`'s states and the log entries that applied them at `at`
 * (replacing any earlier world's, campaigns included), then analyses.
 */
export async function seedWorld(db: Database, world: World, users: number, at: Date): Promise<void> {
  await db.query(`TRUNCATE campaign_items, campaigns, platform_accounts, reconcile_log CASCADE`);
  await db.query(
    `INSERT INTO platform_accounts (user_id, user_name, platform_id, state, last_applied, applied_at, last_verified_at, created_by_connector)
     SELECT md5('user' || n)::uuid, format('user%s@example.com', n), 'p-' || n, 'active', ${world.applied}, $2,
            $2::timestamptz + interval '29 days', true
       FROM generate_series(1, $1::int) n`,
    [users, at, ...world.params],
  );
  await db.query(
    `INSERT INTO reconcile_log (at, user_id, user_name, action, outcome, after, reasons)
     SELECT $2, md5('user' || n)::uuid, format('user%s@example.com', n), 'create', 'succeeded', ${world.applied}, ${world.reasons}
       FROM generate_series(1, $1::int) n`,
    [users, at, ...world.params],
  );
  // The seeded entries predate the chain, as a migrated database's would.
  await db.query(`UPDATE audit_chains SET anchor_id = m.id, head_id = m.id FROM (SELECT max(id) AS id FROM reconcile_log) m
                   WHERE name = 'reconcile_log'`);
  await db.query(`ANALYZE`);
}
