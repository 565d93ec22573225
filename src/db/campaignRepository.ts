import type { Queryable } from "./database.js";
import type { ExplainedGrant } from "../mapping/reasons.js";
import { likePrefix } from "./sql.js";
import { analyzeItemsPartition, writeItemsPartition } from "./campaignItemsPartition.js";

/**
 * Access campaigns and their items (src/review/campaigns/). Items are frozen at start in one
 * INSERT … SELECT over the applied states (platform_accounts.last_applied), with the reasons the
 * reconciler stored with the log entry that applied each state, into the campaign's own partition
 * (src/db/campaignItemsPartition.ts). Counts come from campaign_counts, which the start writes and
 * a trigger keeps on every update of the items (migrations/1763700001920-campaign-partitions.ts).
 */

type Db = Queryable;

type CampaignScope =
  | { kind: "everything" }
  | { kind: "company-admins" }
  | { kind: "workspace"; workspace: string }
  | { kind: "permission"; permission: string }
  | { kind: "groups"; groups: string[] };

/** Who reviews which items: the first entry whose workspace matches (or that names none). */
type ReviewerRule = { name?: string | undefined; role?: string | undefined; workspace?: string | undefined };

export type CloseSummary = { kept: number; revoked: number; undecided: number; undecidedAction: "keep" | "revoke" };

export type Campaign = {
  id: string;
  name: string;
  scope: CampaignScope;
  reviewers: ReviewerRule[];
  fallbackReviewer: string;
  dueAt: Date;
  startedBy: string;
  startedAt: Date;
  remindedAt: Date | null;
  closedAt: Date | null;
  closedBy: string | null;
  closeSummary: CloseSummary | null;
};

type CampaignRow = {
  id: string;
  name: string;
  scope: CampaignScope;
  reviewers: ReviewerRule[];
  fallback_reviewer: string;
  due_at: Date;
  started_by: string;
  started_at: Date;
  reminded_at: Date | null;
  closed_at: Date | null;
  closed_by: string | null;
  close_summary: CloseSummary | null;
};

const mapCampaign = (r: CampaignRow): Campaign => ({
  id: r.id,
  name: r.name,
  scope: r.scope,
  reviewers: r.reviewers,
  fallbackReviewer: r.fallback_reviewer,
  dueAt: r.due_at,
  startedBy: r.started_by,
  startedAt: r.started_at,
  remindedAt: r.reminded_at,
  closedAt: r.closed_at,
  closedBy: r.closed_by,
  closeSummary: r.close_summary,
});

export type CampaignItem = {
  id: string;
  campaignId: string;
  userId: string;
  userName: string;
  scope: "company" | "role" | "workspace" | "permissionSet" | "team";
  workspace: string | null;
  team: string | null;
  /** One string, role or set; for a bundle, the rule it comes from (src/mapping/reasons.ts `bundleLabel`). */
  permission: string;
  /** A granular bundle's strings (null: one string, role or set). */
  bundle: string[] | null;
  reasons: ExplainedGrant["reasons"] | null;
  appliedAt: Date | null;
  appliedByLogId: string | null;
  verifiedAt: Date | null;
  reviewer: string;
  decision: "keep" | "revoke" | null;
  comment: string | null;
  decidedBy: string | null;
  decidedAt: Date | null;
};

type ItemRow = {
  id: string;
  campaign_id: string;
  user_id: string;
  user_name: string;
  scope: CampaignItem["scope"];
  workspace: string | null;
  team: string | null;
  permission: string;
  bundle: string[] | null;
  reasons: CampaignItem["reasons"];
  applied_at: Date | null;
  applied_by_log_id: string | null;
  verified_at: Date | null;
  reviewer: string;
  decision: CampaignItem["decision"];
  comment: string | null;
  decided_by: string | null;
  decided_at: Date | null;
};

const mapItem = (r: ItemRow): CampaignItem => ({
  id: String(r.id),
  campaignId: r.campaign_id,
  userId: r.user_id,
  userName: r.user_name,
  scope: r.scope,
  workspace: r.workspace,
  team: r.team,
  permission: r.permission,
  bundle: r.bundle,
  reasons: r.reasons,
  appliedAt: r.applied_at,
  appliedByLogId: r.applied_by_log_id === null ? null : String(r.applied_by_log_id),
  verifiedAt: r.verified_at,
  reviewer: r.reviewer,
  decision: r.decision,
  comment: r.comment,
  decidedBy: r.decided_by,
  decidedAt: r.decided_at,
});

/** Every string, role and set a held state carries (`h.held`: the account's, read once), one row each. */
const HELD_STRINGS = `
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

function scopeWhere(scope: CampaignScope, add: (v: unknown) => string): string {
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

/** How a reviewer is stored on an item: `name:<SAML NameID>` or `role:<role>`. */
export function reviewerKey(r: { name?: string | undefined; role?: string | undefined }): string {
  return r.name ? `name:${r.name}` : `role:${r.role}`;
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
  const params: unknown[] = [campaign.id];
  const add = (v: unknown) => `$${params.push(v)}`;
  const grants = heldGrants(add(bundling.granularOnly), add(bundling.noRule));
  const where = scopeWhere(c.scope, add);
  const reviewer = reviewerCase(c.reviewers, c.fallbackReviewer, add);
  // The row count comes with the command's own result: a RETURNING counted in a CTE would keep
  // every inserted row in a tuplestore first (it spilled to disk at 500,000 items).
  const items = await writeItemsPartition(tx, campaign.id, (table) => ({
    sql: `WITH ${grants}
     INSERT INTO ${table} (campaign_id, user_id, user_name, scope, workspace, team, permission, bundle, reasons, applied_at, applied_by_log_id, verified_at, reviewer)
     SELECT $1, g.user_id, g.user_name, g.scope, g.workspace, g.team, g.permission, g.bundle, g.reasons,
            g.log_at, g.log_id, g.last_verified_at, ${reviewer}
       FROM grants g
      WHERE ${where}
      ORDER BY g.user_name`,
    params,
  }));
  return { campaign, items };
}

/**
 * Fresh planner statistics after a campaign's items arrive (hundreds of thousands at once), so its
 * pages use the indexes: its partition's, for the columns the item queries filter and order on.
 */
export async function analyzeCampaignItems(db: Db, campaignId: string): Promise<void> {
  await analyzeItemsPartition(db, campaignId);
}

export async function getCampaign(db: Db, id: string, forUpdate = false): Promise<Campaign | undefined> {
  const rows = (await db.query(`SELECT * FROM campaigns WHERE id = $1 ${forUpdate ? "FOR UPDATE" : ""}`, [
    id,
  ])) as CampaignRow[];
  return rows[0] && mapCampaign(rows[0]);
}

export type CampaignCounts = { items: number; kept: number; revoked: number; open: number };

export async function listCampaigns(db: Db): Promise<(Campaign & { counts: CampaignCounts })[]> {
  // The counts kept per reviewer (campaign_counts), summed: a few rows a campaign, not its items.
  const rows = (await db.query(
    `SELECT c.*, coalesce(n.items, 0) AS items, coalesce(n.kept, 0) AS kept, coalesce(n.revoked, 0) AS revoked
       FROM campaigns c LEFT JOIN LATERAL (
         SELECT sum(items)::int AS items, sum(kept)::int AS kept, sum(revoked)::int AS revoked
           FROM campaign_counts WHERE campaign_id = c.id) n ON true
      ORDER BY c.started_at DESC`,
  )) as (CampaignRow & { items: number; kept: number; revoked: number })[];
  return rows.map((r) => ({
    ...mapCampaign(r),
    counts: { items: r.items, kept: r.kept, revoked: r.revoked, open: r.items - r.kept - r.revoked },
  }));
}

/** The campaign's counts, or those of some reviewers' items only: its rows of campaign_counts. */
export async function countCampaignItems(
  db: Db,
  campaignId: string,
  reviewers?: readonly string[],
): Promise<CampaignCounts & { byReviewer: Record<string, number> }> {
  const rows = (await db.query(
    `SELECT reviewer, items, kept, revoked
       FROM campaign_counts WHERE campaign_id = $1 ${reviewers ? "AND reviewer = ANY($2::text[])" : ""}`,
    reviewers ? [campaignId, reviewers] : [campaignId],
  )) as { reviewer: string; items: number; kept: number; revoked: number }[];
  const total = { items: 0, kept: 0, revoked: 0, open: 0, byReviewer: {} as Record<string, number> };
  for (const r of rows) {
    total.items += r.items;
    total.kept += r.kept;
    total.revoked += r.revoked;
    const open = r.items - r.kept - r.revoked;
    total.open += open;
    if (open) total.byReviewer[r.reviewer] = open;
  }
  return total;
}

export type ItemFilter = {
  reviewers?: string[];
  user?: string;
  workspace?: string;
  permission?: string;
  decision?: "keep" | "revoke" | "open";
};

/** One page of items in userName order, after the item `afterId` of that order. */
export async function listCampaignItems(
  db: Db,
  campaignId: string,
  filter: ItemFilter,
  after: { userName: string; id: string } | undefined,
  limit: number,
): Promise<CampaignItem[]> {
  const params: unknown[] = [campaignId];
  const add = (v: unknown) => `$${params.push(v)}`;
  const where = ["campaign_id = $1"];
  if (filter.user) where.push(`lower(user_name) LIKE ${add(likePrefix(filter.user))}`);
  if (filter.workspace) where.push(`workspace = ${add(filter.workspace)}`);
  if (filter.permission) {
    const permission = add(filter.permission);
    where.push(`(permission = ${permission} OR bundle ? ${permission})`);
  }
  if (filter.decision === "open") where.push(`decision IS NULL`);
  else if (filter.decision) where.push(`decision = ${add(filter.decision)}`);
  if (after) where.push(`(user_name, id) > (${add(after.userName)}, ${add(after.id)}::bigint)`);
  const page = (extra: string[]) =>
    `SELECT * FROM campaign_items WHERE ${[...where, ...extra].join(" AND ")} ORDER BY user_name, id LIMIT ${add(limit)}`;
  // One ordered index scan per reviewer key (campaign_items_review), merged: "reviewer = ANY(keys)"
  // would sort every item of the reviewer for each page.
  const sql = filter.reviewers
    ? `SELECT * FROM (${filter.reviewers.map((r) => `(${page([`reviewer = ${add(r)}`])})`).join(" UNION ALL ")}) p
        ORDER BY user_name, id LIMIT ${add(limit)}`
    : page([]);
  const rows = (await db.query(sql, params)) as ItemRow[];
  return rows.map(mapItem);
}

/** The items given, locked, that are still undecided. */
export async function lockOpenItems(tx: Db, campaignId: string, itemIds: readonly string[]): Promise<CampaignItem[]> {
  const rows = (await tx.query(
    `SELECT * FROM campaign_items WHERE campaign_id = $1 AND id = ANY($2::bigint[]) AND decision IS NULL ORDER BY id FOR UPDATE`,
    [campaignId, itemIds],
  )) as ItemRow[];
  return rows.map(mapItem);
}

export async function getCampaignItems(
  db: Db,
  campaignId: string,
  itemIds: readonly string[],
): Promise<CampaignItem[]> {
  const rows = (await db.query(`SELECT * FROM campaign_items WHERE campaign_id = $1 AND id = ANY($2::bigint[])`, [
    campaignId,
    itemIds,
  ])) as ItemRow[];
  return rows.map(mapItem);
}

/** Records a decision on the items given (the campaign's counts follow: the items' update trigger). */
export async function recordDecisions(
  tx: Db,
  campaignId: string,
  itemIds: readonly string[],
  decision: { decision: "keep" | "revoke"; comment: string | null; by: string; at: Date },
): Promise<void> {
  await tx.query(
    `UPDATE campaign_items SET decision = $3, comment = $4, decided_by = $5, decided_at = $6
      WHERE campaign_id = $1 AND id = ANY($2::bigint[])`,
    [campaignId, itemIds, decision.decision, decision.comment, decision.by, decision.at],
  );
}

/**
 * Undecided items of a campaign, for a close that revokes them. The caller holds the campaign's
 * row lock, which every decision takes first, so the items cannot change meanwhile.
 */
export async function undecidedItems(tx: Db, campaignId: string): Promise<CampaignItem[]> {
  const rows = (await tx.query(
    `SELECT * FROM campaign_items WHERE campaign_id = $1 AND decision IS NULL ORDER BY user_name, id`,
    [campaignId],
  )) as ItemRow[];
  return rows.map(mapItem);
}

export async function markCampaignClosed(
  tx: Db,
  id: string,
  closed: { at: Date; by: string; summary: CloseSummary },
): Promise<void> {
  await tx.query(`UPDATE campaigns SET closed_at = $2, closed_by = $3, close_summary = $4 WHERE id = $1`, [
    id,
    closed.at,
    closed.by,
    JSON.stringify(closed.summary),
  ]);
}

/** Open campaigns due by `at` (the scheduler closes them). */
export async function listCampaignsDue(db: Db, at: Date): Promise<Campaign[]> {
  const rows = (await db.query(`SELECT * FROM campaigns WHERE closed_at IS NULL AND due_at <= $1 ORDER BY due_at`, [
    at,
  ])) as CampaignRow[];
  return rows.map(mapCampaign);
}

/** Open campaigns not yet reminded whose due date is within `before` of `at`. */
export async function listCampaignsToRemind(db: Db, at: Date, beforeMs: number): Promise<Campaign[]> {
  const rows = (await db.query(
    `SELECT * FROM campaigns WHERE closed_at IS NULL AND reminded_at IS NULL AND due_at > $1 AND due_at <= $1 + make_interval(secs => $2::double precision / 1000)
      ORDER BY due_at`,
    [at, beforeMs],
  )) as CampaignRow[];
  return rows.map(mapCampaign);
}

export async function markCampaignReminded(tx: Db, id: string, at: Date): Promise<boolean> {
  const rows = (await tx.query(
    `UPDATE campaigns SET reminded_at = $2 WHERE id = $1 AND reminded_at IS NULL RETURNING id`,
    [id, at],
  )) as unknown[];
  return rows.length > 0;
}
