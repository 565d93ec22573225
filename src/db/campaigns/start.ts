import type { Queryable } from "../database.js";
import { analyzeItemsPartition, writeItemsPartition } from "./itemsPartition.js";
import {
  mapCampaign,
  reviewerKey,
  type Campaign,
  type CampaignRow,
  type CampaignScope,
  type ReviewerRule,
} from "./campaignRepository.js";
import { HELD_STRINGS, NOT_OUTSIDE, OUTSIDE_ITEMS, UNMANAGED_ITEMS } from "./startOrigins.js";

/**
 * A campaign's start (src/review/campaigns/): the campaign row, and its items frozen in one
 * INSERT … SELECT over the applied states (platform_accounts.last_applied), with the reasons the
 * reconciler stored with the log entry that applied each state, into the campaign's own partition
 * (src/db/campaigns/itemsPartition.ts).
 */

type Db = Queryable;

/** A grant's key in the stored reasons: scope|workspace|team|string. */
const KEY = `concat_ws('|', s.scope, coalesce(s.workspace, ''), coalesce(s.team, ''), s.permission)`;
const STORED_KEY = (permission: string) =>
  `concat_ws('|', r->>'scope', coalesce(r->>'workspace', ''), coalesce(r->>'team', ''), ${permission})`;

/**
 * One row per reviewable grant of every held account (the department is no grant of access, so no
 * item), as src/mapping/reasons.ts `explainGrants` makes them, with the reasons the reconciler
 * stored with the log entry that applied the state:
 * - a state that its log entry applied as it stands (`as_stored`): the grants that entry stored
 *   (`explainGrants` stored one per string of a legacy state, a granular state's bundles), copied
 *   as stored: keying the stored reasons per user and looking each string up was half the start's
 *   CPU once no two users' reasons were alike (issue 35), and grouping 136 granular strings a user
 *   here took ten times the time of five strings. A granular entry counts as stored only when
 *   its workspace and team grants are all bundles;
 * - a legacy state out of step with its entry: one row per string, role or set, as always, each
 *   with the stored reasons of its string;
 * - a granular state (`reviewedByBundle`: so marked, a role, or a string of `granularOnly`) out of
 *   step with its entry (none, or one stored string by string): its strings grouped here, per
 *   workspace or team, by the first rule of each string's stored reasons ("rule #n" when the entry
 *   stored no bundle name), the strings with none in one bundle (`noRule`).
 * The account's state and its entry's reasons are read once each (`h`, `l`), the model decided once
 * (`h.by_bundle`; OFFSET 0 keeps the planner from copying the expressions into each branch, which
 * would read them again: a granular state is stored compressed). Each branch is gated on the
 * account (a one-time filter), so a legacy account runs the first branch only.
 */
const heldGrants = (granularOnly: string, noRule: string) => `
  grants AS (
    SELECT a.user_id, a.user_name, a.last_verified_at, l.id AS log_id, l.at AS log_at,
           g.scope, g.workspace, g.team, g.permission, g.bundle, g.reasons
      FROM platform_accounts a
      -- The state read once, and its model decided once.
      CROSS JOIN LATERAL (
        SELECT x.held, coalesce(x.held->>'permissionModel' = 'granular'
                 OR jsonb_typeof(x.held->'roles') = 'array' AND jsonb_array_length(x.held->'roles') > 0
                 OR EXISTS (SELECT 1 FROM jsonb_path_query(x.held, 'strict $.workspaces[*].appGroupPermissions[*]') p
                             WHERE p #>> '{}' = ANY(${granularOnly}::text[]))
                 OR EXISTS (SELECT 1 FROM jsonb_path_query(x.held, 'strict $.workspaces[*].team[*].teamPermissions[*]') p
                             WHERE p #>> '{}' = ANY(${granularOnly}::text[])),
               false) AS by_bundle
          FROM (SELECT a.last_applied || '{}'::jsonb AS held OFFSET 0) x
        OFFSET 0) h
      -- The log entry that applied the state held now carries the reasons for each of its grants
      -- (read once too); a state it applied as it stands takes the grants it stored.
      LEFT JOIN LATERAL (
        SELECT e.id, e.at, e.reasons,
               jsonb_typeof(e.reasons) = 'array' AND e.after = h.held
                 AND (NOT h.by_bundle
                      OR NOT jsonb_path_exists(e.reasons, '$[*] ? ((@.scope == "workspace" || @.scope == "team") && !(exists (@.bundle)))')) AS as_stored
          FROM (SELECT id, at, reasons || '[]'::jsonb AS reasons, after
                  FROM reconcile_log
                 WHERE user_id = a.user_id AND action IN ('create', 'update', 'adopt') AND outcome = 'succeeded'
                 ORDER BY at DESC, id DESC LIMIT 1) e) l ON true
      CROSS JOIN LATERAL (SELECT coalesce(l.as_stored, false) AS as_stored OFFSET 0) st
      -- Otherwise the stored reasons keyed by string, once per user: each string then finds its own
      -- with one key look-up (a stored bundle's stand for each of its strings, its name beside them).
      LEFT JOIN LATERAL (
        SELECT jsonb_object_agg(r.key, r.reasons) AS by_grant, jsonb_object_agg(r.key, r.label) FILTER (WHERE r.label IS NOT NULL) AS by_bundle
          FROM (SELECT ${STORED_KEY("r->>'permission'")} AS key, r->'reasons' AS reasons, NULL::jsonb AS label
                  FROM jsonb_array_elements(CASE jsonb_typeof(l.reasons) WHEN 'array' THEN l.reasons ELSE '[]' END) r
                 WHERE NOT st.as_stored
                UNION ALL
                SELECT ${STORED_KEY("x")}, r->'reasons', r->'permission'
                  FROM jsonb_array_elements(CASE jsonb_typeof(l.reasons) WHEN 'array' THEN l.reasons ELSE '[]' END) r,
                       jsonb_array_elements_text(r->'bundle') x
                 WHERE h.by_bundle AND NOT st.as_stored AND jsonb_typeof(r->'bundle') = 'array') r) k ON true
      CROSS JOIN LATERAL (
        SELECT s.scope, s.workspace, s.team, s.permission, NULL::jsonb AS bundle, k.by_grant -> ${KEY} AS reasons
          FROM (${HELD_STRINGS}) s
         WHERE NOT st.as_stored AND NOT (h.by_bundle AND s.scope IN ('workspace', 'team'))
        UNION ALL
        SELECT b.scope, b.workspace, b.team,
               coalesce(min(b.label), CASE WHEN b.owner IS NULL THEN ${noRule} ELSE 'rule #' || (b.owner::int + 1) END),
               jsonb_agg(b.permission ORDER BY b.permission),
               CASE WHEN b.owner IS NOT NULL THEN jsonb_build_array((array_agg(b.reasons -> 0))[1])
                    WHEN bool_and(b.reasons IS NULL) THEN NULL ELSE '[]'::jsonb END
          FROM (SELECT s.*, k.by_grant -> ${KEY} AS reasons, k.by_bundle ->> ${KEY} AS label,
                       k.by_grant -> ${KEY} -> 0 -> 'rule' ->> 'index' AS owner
                  FROM (${HELD_STRINGS}) s WHERE s.scope IN ('workspace', 'team')) b
         WHERE h.by_bundle AND NOT st.as_stored
         GROUP BY b.scope, b.workspace, b.team, b.owner
        UNION ALL
        SELECT e->>'scope', e->>'workspace', e->>'team', e->>'permission',
               CASE WHEN jsonb_typeof(e->'bundle') = 'array' THEN e->'bundle' END,
               e->'reasons'
          FROM jsonb_array_elements(l.reasons) e
         WHERE st.as_stored AND e->>'scope' <> 'department') g
     WHERE a.platform_id IS NOT NULL AND a.last_applied IS NOT NULL)`;

function scopeWhere(scope: CampaignScope, add: (v: unknown) => string, startedAt: Date): string {
  switch (scope.kind) {
    case "everything":
      return "true";
    case "company-admins":
      return `g.scope = 'company' AND g.permission = 'admin'`;
    case "workspace":
      return `g.workspace = ${add(scope.workspace)}`;
    case "permission": {
      const permission = add(scope.permission);
      return `(g.permission = ${permission} OR g.bundle ? ${permission})`;
    }
    case "groups":
      return `EXISTS (SELECT 1 FROM idp_group_members m JOIN idp_groups ig ON ig.id = m.group_id
                       WHERE m.user_id = g.user_id AND lower(ig.display_name) = ANY(${add(scope.groups.map((n) => n.toLowerCase()))}::text[]))`;
    case "unmanaged":
      return "true"; // its items are the accounts made by hand (UNMANAGED_ITEMS), not held grants
    case "not-signed-in": {
      // The platform's record (platform_account_activity): no sign-in since the cutoff, or none recorded.
      const cutoff = add(new Date(startedAt.getTime() - scope.days * 86_400_000));
      return `NOT EXISTS (SELECT 1 FROM platform_account_activity pa
                           WHERE pa.user_name = lower(g.user_name) AND pa.last_sign_in_at >= ${cutoff}::timestamptz)`;
    }
  }
}

/** The reviewer of an item: the first rule whose workspace matches (or names none), else the fallback. */
function reviewerCase(reviewers: readonly ReviewerRule[], fallback: string, add: (v: unknown) => string): string {
  const arms = reviewers.map((r) => {
    const who = add(reviewerKey(r));
    return r.workspace ? `WHEN g.workspace = ${add(r.workspace)} THEN ${who}` : `WHEN true THEN ${who}`;
  });
  // With no reviewer rules every item goes to the fallback (a CASE needs at least one WHEN).
  return arms.length ? `CASE ${arms.join(" ")} ELSE ${add(fallback)} END` : add(fallback);
}

/**
 * How granular states are grouped into items, in the domain's words (src/mapping/reasons.ts): the
 * strings only the granular model has, and the name of the bundle of strings no rule gives.
 */
export type ItemBundling = { granularOnly: readonly string[]; noRule: string };

/**
 * Creates the campaign and freezes its items in one statement (one pass over the accounts in
 * userName order, read from platform_accounts_user_name: no sort, no join over all grants (a
 * granular state's bundles are grouped within its account)) into the campaign's partition, whose
 * indexes and foreign key come after its rows; returns it with its item count, counted in SQL.
 * A second statement adds the grants made in the dashboard and kept; an `unmanaged` campaign's
 * items are the accounts made by hand instead (src/db/campaigns/startOrigins.ts).
 */
export async function insertCampaign(
  tx: Db,
  c: Omit<Campaign, "id" | "remindedAt" | "closedAt" | "closedBy" | "closeSummary">,
  bundling: ItemBundling,
): Promise<{ campaign: Campaign; items: number }> {
  const [row] = (await tx.query(
    `INSERT INTO campaigns (name, scope, reviewers, fallback_reviewer, due_at, started_by, started_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
    [
      c.name,
      JSON.stringify(c.scope),
      JSON.stringify(c.reviewers),
      c.fallbackReviewer,
      c.dueAt,
      c.startedBy,
      c.startedAt,
    ],
  )) as CampaignRow[];
  const campaign = mapCampaign(row!);
  // The row count comes with the command's own result: a RETURNING counted in a CTE would keep
  // every inserted row in a tuplestore first (it spilled to disk at 500,000 items).
  const items = await writeItemsPartition(tx, campaign.id, (table) =>
    c.scope.kind === "unmanaged"
      ? [itemsInsert(table, campaign, (reviewer) => `SELECT ${itemValues(reviewer)} FROM (${UNMANAGED_ITEMS}) g`)]
      : [
          itemsInsert(table, campaign, (reviewer, add) => {
            const grants = heldGrants(add(bundling.granularOnly), add(bundling.noRule));
            return `WITH ${grants} SELECT ${itemValues(reviewer)} FROM grants g
                     WHERE ${scopeWhere(c.scope, add, c.startedAt)} AND ${NOT_OUTSIDE}`;
          }),
          // Grants made in the dashboard and kept: in every campaign of IdP users (startOrigins.ts).
          itemsInsert(table, campaign, (reviewer) => `SELECT ${itemValues(reviewer)} FROM (${OUTSIDE_ITEMS}) g`),
        ],
  );
  return { campaign, items };
}

const ITEM_COLUMNS = `campaign_id, user_id, user_name, scope, workspace, team, permission, bundle, reasons,
  applied_at, applied_by_log_id, verified_at, reviewer`;
const itemValues = (reviewer: string) => `$1, g.user_id, g.user_name, g.scope, g.workspace, g.team, g.permission,
  g.bundle, g.reasons, g.log_at, g.log_id, g.last_verified_at, ${reviewer}`;

/** One INSERT of items (`g.*` rows from `select`), in userName order, with its own parameters ($1: the campaign). */
function itemsInsert(
  table: string,
  campaign: Pick<Campaign, "id" | "reviewers" | "fallbackReviewer">,
  select: (reviewer: string, add: (v: unknown) => string) => string,
): { sql: string; params: unknown[] } {
  const params: unknown[] = [campaign.id];
  const add = (v: unknown) => `$${params.push(v)}`;
  const reviewer = reviewerCase(campaign.reviewers, campaign.fallbackReviewer, add);
  return { sql: `INSERT INTO ${table} (${ITEM_COLUMNS}) ${select(reviewer, add)} ORDER BY g.user_name`, params };
}

/**
 * Fresh planner statistics after a campaign's items arrive (hundreds of thousands at once), so its
 * pages use the indexes: its partition's, for the columns the item queries filter and order on.
 */
export async function analyzeCampaignItems(db: Db, campaignId: string): Promise<void> {
  await analyzeItemsPartition(db, campaignId);
}
