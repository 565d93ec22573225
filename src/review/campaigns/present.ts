import { assignedLabel } from "../../mapping/reasons.js";
import type { Campaign } from "../../db/campaigns/campaignRepository.js";
import type { CampaignItem } from "../../db/campaigns/itemRepository.js";
import { reviewerKey } from "../../db/campaigns/campaignRepository.js";
import type { AccessDeny } from "../../db/campaigns/denyRepository.js";
import { grantWords } from "../../reconcile/desiredSource.js";
import { holdsInWords } from "../../platformRecord/unmanaged.js";
import { originOf, originWords } from "./origins.js";

/** Campaigns, items and denies in their API shape (the pages, the JSON API and the CLI show these). */

export function presentCampaign(c: Campaign) {
  return {
    id: c.id,
    name: c.name,
    scope: c.scope,
    reviewers: c.reviewers.map((r) => ({ reviewer: reviewerKey(r), workspace: r.workspace ?? null })),
    fallbackReviewer: c.fallbackReviewer,
    dueAt: c.dueAt.toISOString(),
    startedBy: c.startedBy,
    startedAt: c.startedAt.toISOString(),
    remindedAt: c.remindedAt?.toISOString() ?? null,
    closedAt: c.closedAt?.toISOString() ?? null,
    closedBy: c.closedBy,
    closeSummary: c.closeSummary,
    status: c.closedAt ? "closed" : "open",
  };
}

export function presentItem(i: CampaignItem) {
  const origin = originOf(i);
  return {
    id: i.id,
    userId: i.userId,
    userName: i.userName,
    scope: i.scope,
    workspace: i.workspace,
    team: i.team,
    permission: i.permission,
    /** A granular bundle's strings (null: one string, role or set; `permission` then names it). */
    bundle: i.bundle,
    /** What the item grants: a bundle's strings, or its one string, role or set. */
    permissions: i.bundle ?? [i.permission],
    count: i.bundle?.length ?? 1,
    grant: grantWords(i),
    rules: (i.reasons ?? []).flatMap((r) =>
      "rule" in r
        ? [
            {
              line: r.rule.line,
              file: r.rule.file,
              description: r.rule.description,
              groups: r.groups,
              assigned: r.assigned ? assignedLabel(r.assigned) : null,
            },
          ]
        : [],
    ),
    /**
     * The IdP's own assignments behind the item (catalogue entries): a revoke writes a deny that
     * holds the grant off the platform, but the IdP still assigns it until it is removed there.
     */
    idpAssigns: idpAssignsNote(i),
    /** Where the item comes from when no rule gives it, in words ("granted in the dashboard by … at …"). */
    origin: origin ? originWords(origin) : null,
    /** An account made by hand (scope `account`): who added it, when, and what it held when confirmed. */
    unmanaged:
      origin && "unmanaged" in origin
        ? {
            addedBy: origin.unmanaged.addedBy,
            firstSeen: origin.unmanaged.firstSeen,
            confirmedAt: origin.unmanaged.confirmedAt,
            platformId: origin.unmanaged.platformId,
            holds: holdsInWords(origin.unmanaged.permissions),
          }
        : null,
    groups: groupsOf(i),
    appliedAt: i.appliedAt?.toISOString() ?? null,
    appliedByLogId: i.appliedByLogId,
    verifiedAt: i.verifiedAt?.toISOString() ?? null,
    reviewer: i.reviewer,
    decision: i.decision,
    comment: i.comment,
    decidedBy: i.decidedBy,
    decidedAt: i.decidedAt?.toISOString() ?? null,
  };
}

function idpAssignsNote(i: CampaignItem): string | null {
  const assigned = (i.reasons ?? []).flatMap((r) => ("rule" in r && r.assigned ? [r.assigned] : []));
  if (!assigned.length) return null;
  const where = [...new Set(assigned.map((a) => a.assignedIn))].join(", ");
  return `${assigned.map((a) => assignedLabel(a)).join("; ")}: a revoke holds it off the platform, but ${where} still assigns it until the assignment is removed there`;
}

export const groupsOf = (i: CampaignItem) => [
  ...new Set((i.reasons ?? []).flatMap((r) => ("rule" in r ? r.groups : []))),
];

/**
 * A deny, or the denies of one revoked bundle (the strings revoked as one item, in the same state)
 * as one: `permission` is then the bundle's name, `permissions` its strings, and `id` the first's
 * (lifting it lifts them all: src/db/campaigns/denyRepository.ts `endDeniesWithTheirBundles`).
 */
export function presentDeny(d: AccessDeny, bundle: readonly AccessDeny[] = [d]) {
  const permissions = bundle.map((b) => b.permission);
  const grant = d.partOf ? { ...d, permission: d.partOf, bundle: permissions } : d;
  return {
    id: d.id,
    userId: d.userId,
    userName: d.userName,
    scope: d.scope,
    workspace: d.workspace,
    team: d.team,
    permission: grant.permission,
    permissions,
    count: permissions.length,
    grant: grantWords(grant),
    words: `revoked in campaign "${d.campaignName}", by ${d.decidedBy}, on ${d.decidedAt.toISOString()}`,
    campaignId: d.campaignId,
    campaignName: d.campaignName,
    decidedBy: d.decidedBy,
    decidedAt: d.decidedAt.toISOString(),
    comment: d.comment,
    endedAt: d.endedAt?.toISOString() ?? null,
    endReason: d.endReason,
    endedBy: d.endedBy,
  };
}

/** Denies as reviewers read them: the strings of one revoked bundle that share a state, as one (order kept). */
export function presentDenies(denies: readonly AccessDeny[]) {
  const groups = new Map<string, AccessDeny[]>();
  for (const d of denies) {
    const key = d.partOf
      ? JSON.stringify([d.userId, d.itemId, d.partOf, d.scope, d.workspace, d.team, d.endedAt?.getTime() ?? null])
      : `deny ${d.id}`;
    const group = groups.get(key);
    if (group) group.push(d);
    else groups.set(key, [d]);
  }
  return [...groups.values()].map((group) => presentDeny(group[0]!, group));
}
