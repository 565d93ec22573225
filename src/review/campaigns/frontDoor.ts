import {
  campaignDetail,
  campaignItems,
  campaignList,
  campaignOf,
  closeCampaign,
  decideItems,
  denyList,
  liftDeny,
  startCampaign,
  type CampaignDeps,
} from "./index.js";

/** A campaign use case with its deps bound: the same arguments after the first. */
type Bound<F> = F extends (deps: CampaignDeps, ...args: infer A) => infer R ? (...args: A) => R : never;

/**
 * Access campaigns (docs/access-review.md, "Campaigns") as the pages and the JSON API ask them:
 * one object built once with the database, the clock and CAMPAIGN_UNDECIDED_AT_CLOSE
 * (src/service/http.ts); each method is the use case of index.ts or decisions.ts of that name.
 */
export type Campaigns = {
  /** CAMPAIGN_UNDECIDED_AT_CLOSE: what closing a campaign does with its undecided items. */
  readonly undecidedAtClose: "keep" | "revoke";
  list: Bound<typeof campaignList>;
  start: Bound<typeof startCampaign>;
  detail: Bound<typeof campaignDetail>;
  of: Bound<typeof campaignOf>;
  items: Bound<typeof campaignItems>;
  decide: Bound<typeof decideItems>;
  /** Closes the campaign, its undecided items kept or revoked as `undecidedAtClose` says. */
  close(id: string, by: string): ReturnType<typeof closeCampaign>;
  denies: Bound<typeof denyList>;
  liftDeny: Bound<typeof liftDeny>;
};

export function createCampaigns(deps: CampaignDeps & { undecidedAtClose: "keep" | "revoke" }): Campaigns {
  const { db, clock, undecidedAtClose } = deps;
  const bound: CampaignDeps = { db, clock };
  return {
    undecidedAtClose,
    list: () => campaignList(bound),
    start: (...args) => startCampaign(bound, ...args),
    detail: (...args) => campaignDetail(bound, ...args),
    of: (...args) => campaignOf(bound, ...args),
    items: (...args) => campaignItems(bound, ...args),
    decide: (...args) => decideItems(bound, ...args),
    close: (id, by) => closeCampaign(bound, id, by, undecidedAtClose),
    denies: (...args) => denyList(bound, ...args),
    liftDeny: (...args) => liftDeny(bound, ...args),
  };
}
