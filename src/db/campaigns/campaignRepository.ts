import type { Queryable } from "../database.js";

/**
 * Access campaigns (src/review/campaigns/): the campaign rows, their counts and their lifecycle
 * (reminded, closed). A campaign's start, which freezes its items, is src/db/campaigns/start.ts; the
 * items themselves are src/db/campaigns/itemRepository.ts. Counts come from campaign_counts, which
 * the start writes and a trigger keeps on every update of the items
 * (migrations/1763700001920-campaign-partitions.ts).
 */

type Db = Queryable;

export type CampaignScope =
  | { kind: "everything" }
  | { kind: "company-admins" }
  | { kind: "workspace"; workspace: string }
  | { kind: "permission"; permission: string }
  | { kind: "groups"; groups: string[] }
  /** Accounts with no sign-in in the platform's record for `days` days before the start (or none ever recorded). */
  | { kind: "not-signed-in"; days: number }
  /** The accounts made by hand in the platform's dashboard and confirmed (unmanaged_accounts), one item each. */
  | { kind: "unmanaged" };

/** Who reviews which items: the first entry whose workspace matches (or that names none). */
export type ReviewerRule = { name?: string | undefined; role?: string | undefined; workspace?: string | undefined };

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

export type CampaignRow = {
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

export const mapCampaign = (r: CampaignRow): Campaign => ({
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

/** How a reviewer is stored on an item: `name:<SAML NameID>` or `role:<role>`. */
export function reviewerKey(r: { name?: string | undefined; role?: string | undefined }): string {
  return r.name ? `name:${r.name}` : `role:${r.role}`;
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
