import type { Queryable } from "../database.js";
import type { GrantReason } from "../../mapping/reasons.js";
import type { UnmanagedPermissions } from "../platform/unmanagedAccountRepository.js";
import { likePrefix } from "../sql.js";

/**
 * The items of access campaigns (src/review/campaigns/): one grant of one user each, frozen at the
 * start (src/db/campaigns/start.ts) into the campaign's own partition, then read page by page and
 * decided. A decision's count follows in campaign_counts (the items' update trigger).
 */

type Db = Queryable;

/**
 * Where an item comes from when no rule of the mapping gives it (src/db/campaigns/start.ts): an
 * account made by hand in the platform's dashboard (scope `account`, one item per account, its id
 * the account's `account_id`), or a grant made in the dashboard and kept (PLATFORM_OUTSIDE_CHANGES=report).
 */
export type ItemOrigin =
  | {
      unmanaged: {
        addedBy: string | null;
        firstSeen: string;
        confirmedAt: string | null;
        platformId: string | null;
        permissions: UnmanagedPermissions | null;
      };
    }
  | { outside: { actor: string; at: string; event: string } };

export type CampaignItem = {
  id: string;
  campaignId: string;
  userId: string;
  userName: string;
  /** `account`: the whole account, made by hand in the dashboard (ItemOrigin `unmanaged`). */
  scope: "company" | "role" | "workspace" | "permissionSet" | "team" | "account";
  workspace: string | null;
  team: string | null;
  /** One string, role or set; for a bundle, the rule it comes from (src/mapping/reasons.ts `bundleLabel`). */
  permission: string;
  /** A granular bundle's strings (null: one string, role or set). */
  bundle: string[] | null;
  reasons: (GrantReason | ItemOrigin)[] | null;
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
