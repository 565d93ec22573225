import { z } from "zod";
import { listCampaigns, countCampaignItems } from "../../db/campaigns/campaignRepository.js";
import { getCampaignItems, listCampaignItems, type ItemFilter } from "../../db/campaigns/itemRepository.js";
import { analyzeCampaignItems, insertCampaign } from "../../db/campaigns/start.js";
import { listDenies } from "../../db/campaigns/denyRepository.js";
import { writeLogEntry } from "../../db/reconcile/logRepository.js";
import { BadRequestError, ForbiddenError } from "../../errors.js";
import { can } from "../../policy.js";
import { GRANULAR_ONLY_STRINGS, NO_RULE } from "../../mapping/reasons.js";
import {
  campaignOr404,
  fallbackKey,
  keysMatching,
  keysOf,
  type StartCampaignInput,
  type CampaignDeps,
  type Reviewer,
} from "./common.js";
import { presentCampaign, presentDenies, presentDeny, presentItem } from "./present.js";

/**
 * Access certification campaigns (docs/access-review.md, "Campaigns"): the one implementation the
 * admin pages, the JSON API and the CLI call. Starting, listing and reading here; decisions,
 * closing and the scheduler's pass in decisions.ts. A "revoke" opens a local deny
 * (src/mapping/denies.ts) and marks the user dirty with an admin trigger, so the reconciler takes
 * the grant away at once as a reduction funded from the reserve.
 */

export {
  checkReviewerName,
  decideSchema,
  deciderOf,
  startCampaignSchema,
  type CampaignDeps,
  type Reviewer,
} from "./common.js";
export { campaignPass, closeCampaign, decideItems, liftDeny } from "./decisions.js";

/** Starts a campaign: its items frozen from the applied states in one statement. */
export async function startCampaign(deps: CampaignDeps, input: StartCampaignInput, startedBy: string) {
  const now = deps.clock.now();
  const dueAt = new Date(input.dueAt);
  if (dueAt <= now) throw new BadRequestError("dueAt: must be in the future");
  const startedMs = Date.now();
  const result = await deps.db.transaction(async (tx) => {
    // A granular state's strings are frozen as the bundles its reviews show (src/mapping/reasons.ts).
    const started = await insertCampaign(
      tx,
      {
        name: input.name,
        scope: input.scope,
        reviewers: input.reviewers,
        fallbackReviewer: fallbackKey(input.fallbackReviewer),
        dueAt,
        startedBy,
        startedAt: now,
      },
      { granularOnly: GRANULAR_ONLY_STRINGS, noRule: NO_RULE },
    );
    await writeLogEntry(tx, {
      at: now,
      action: "campaign",
      outcome: "succeeded",
      trigger: { kind: "campaign", campaignId: started.campaign.id },
      actor: startedBy,
      note: `campaign "${input.name}" started by ${startedBy}: ${started.items} items, due ${dueAt.toISOString()}`,
    });
    return started;
  });
  await analyzeCampaignItems(deps.db, result.campaign.id);
  return { ...presentCampaign(result.campaign), items: result.items, startMs: Date.now() - startedMs };
}

export type CampaignSummary = Awaited<ReturnType<typeof campaignList>>[number];
export type CampaignSummaryView = Awaited<ReturnType<typeof campaignOf>>;
export type CampaignItemsPage = Awaited<ReturnType<typeof campaignItems>>;
export type DenyView = ReturnType<typeof presentDeny>;

export async function campaignList(deps: CampaignDeps) {
  return (await listCampaigns(deps.db)).map((c) => ({ ...presentCampaign(c), counts: c.counts }));
}

export async function campaignDetail(deps: CampaignDeps, id: string) {
  const campaign = await campaignOr404(deps.db, id);
  const counts = await countCampaignItems(deps.db, id);
  return { ...presentCampaign(campaign), counts };
}

export const campaignItemsQuerySchema = z.object({
  /**
   * `mine` (default): the items this reviewer is to decide; `all`: every item (admins); a reviewer
   * as items store it (`name:<NameID>`, `role:<role>`): that reviewer's items (admins, or their own).
   */
  reviewer: z
    .union([z.enum(["mine", "all"]), z.string().regex(/^(name|role):.{1,320}$/, "mine, all, name:… or role:…")])
    .default("mine"),
  user: z.string().max(320).optional(),
  workspace: z.string().max(200).optional(),
  permission: z.string().max(200).optional(),
  decision: z.enum(["open", "keep", "revoke"]).optional(),
  cursor: z
    .string()
    .regex(/^\d{1,18}$/)
    .optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

export type CampaignItemsQuery = z.output<typeof campaignItemsQuerySchema>;

/** A campaign without its counts (they read every item: the campaign page counts only the items it shows). */
export async function campaignOf(deps: CampaignDeps, id: string) {
  return presentCampaign(await campaignOr404(deps.db, id));
}

/**
 * One page of a campaign's items: a reviewer's own by default. With `counts`, also the open, kept
 * and revoked items of the same reviewers (the whole campaign for `all`), as the campaign page shows.
 */
export async function campaignItems(
  deps: CampaignDeps,
  id: string,
  who: Reviewer,
  q: CampaignItemsQuery,
  options: { counts?: boolean } = {},
) {
  await campaignOr404(deps.db, id);
  const own = keysOf(who);
  const asked = q.reviewer === "mine" || q.reviewer === "all" ? [] : keysMatching(q.reviewer);
  if (q.reviewer !== "mine" && !asked.some((k) => own.includes(k)) && !can(who.role, "reviewAnyone"))
    throw new ForbiddenError("Only admins see other reviewers' items");
  const filter: ItemFilter = {
    ...(q.reviewer === "mine" ? { reviewers: own } : q.reviewer === "all" ? {} : { reviewers: asked }),
    ...(q.user ? { user: q.user } : {}),
    ...(q.workspace ? { workspace: q.workspace } : {}),
    ...(q.permission ? { permission: q.permission } : {}),
    ...(q.decision ? { decision: q.decision } : {}),
  };
  let after: { userName: string; id: string } | undefined;
  if (q.cursor) {
    const [item] = await getCampaignItems(deps.db, id, [q.cursor]);
    if (!item) throw new BadRequestError("cursor: not a cursor this API gave");
    after = { userName: item.userName, id: item.id };
  }
  const [items, counts] = await Promise.all([
    listCampaignItems(deps.db, id, filter, after, q.limit + 1),
    options.counts ? countCampaignItems(deps.db, id, filter.reviewers) : undefined,
  ]);
  const page = items.slice(0, q.limit);
  return {
    items: page.map(presentItem),
    nextCursor: items.length > q.limit ? page.at(-1)!.id : null,
    ...(counts
      ? { counts: { items: counts.items, open: counts.open, kept: counts.kept, revoked: counts.revoked } }
      : {}),
  };
}

/** The denies, active first; of one user or one campaign when given. */
export async function denyList(
  deps: CampaignDeps,
  filter: { userId?: string; campaignId?: string; activeOnly?: boolean },
  limit = 1000,
) {
  return presentDenies(await listDenies(deps.db, filter, limit));
}
