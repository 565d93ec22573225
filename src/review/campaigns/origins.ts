import type { Queryable } from "../../db/database.js";
import type { Campaign } from "../../db/campaigns/campaignRepository.js";
import type { CampaignItem, ItemOrigin } from "../../db/campaigns/itemRepository.js";
import { deleteHold } from "../../db/reconcile/holdRepository.js";
import { clearOutsideChange, getOutsideChange, saveOutsideChange } from "../../db/platform/outsideChangeRepository.js";
import { markUsersDirty } from "../../db/reconcile/queueRepository.js";
import type { LogEntryInput } from "../../db/reconcile/logRepository.js";
import { recordUnmanagedRemoval } from "../../db/platform/unmanagedRemovalRepository.js";
import { grantWords } from "../../reconcile/desiredSource.js";
import { notify } from "../../notify/events.js";
import { campaignRevoked } from "../../notify/campaignEvents.js";
import { isEmptyAccess, withoutGrant } from "../../reconcile/outsideAccess.js";

/**
 * Revokes of the items no rule of the mapping gives (src/db/campaigns/startOrigins.ts). Neither opens
 * a deny (the mapping does not grant them: a deny would end at once); each records what the
 * reconciler is to do and queues it, which then spends from the budget ledger and logs as any write:
 *
 * - an account made by hand: strip (one PUT taking its permissions away) or delete (one DELETE,
 *   held for an admin's approval as the breaker holds a delete): src/reconcile/unmanagedRemoval.ts;
 * - a grant made in the dashboard and kept (PLATFORM_OUTSIDE_CHANGES=report): it leaves the kept
 *   change, so the mapping's grants are put back (one PUT, a reduction), as `revert` would have.
 */

export type Removal = "strip" | "delete";
export type Decided = { by: string; comment: string; at: Date };

const unmanagedOf = (i: CampaignItem) => (i.reasons ?? []).flatMap((r) => ("unmanaged" in r ? [r.unmanaged] : []))[0];
const outsideOf = (i: CampaignItem) => (i.reasons ?? []).flatMap((r) => ("outside" in r ? [r.outside] : []))[0];

/** The item's origin when no rule gives it: an account made by hand, or a grant made in the dashboard. */
export function originOf(i: CampaignItem): ItemOrigin | undefined {
  const unmanaged = unmanagedOf(i);
  if (unmanaged) return { unmanaged };
  const outside = outsideOf(i);
  return outside ? { outside } : undefined;
}

/** "granted in the dashboard by ops@… at 2026-…": the item's origin in words. */
export function originWords(origin: ItemOrigin): string {
  if ("outside" in origin) return `granted in the dashboard by ${origin.outside.actor} at ${origin.outside.at}`;
  const by = origin.unmanaged.addedBy ? ` by ${origin.unmanaged.addedBy}` : "";
  return `account made by hand in the platform's dashboard${by}, not managed by the IdP`;
}

/**
 * Revokes the items given that no rule gives (each notified as `campaign.revoked`); answers their
 * log entries and the other items, whose grants the mapping gives (a deny holds those off).
 */
export async function revokeByOrigin(
  tx: Queryable,
  campaign: Campaign,
  all: readonly CampaignItem[],
  d: Decided,
  removal: Removal,
): Promise<{ logged: LogEntryInput[]; items: MappedItem[] }> {
  const unmanaged = all.filter((i) => unmanagedOf(i));
  const outside = all.filter((i) => !unmanagedOf(i) && outsideOf(i));
  const logged = [
    ...(await revokeUnmanaged(tx, campaign, unmanaged, d, removal)),
    ...(await revokeOutside(tx, campaign, outside, d)),
  ];
  for (const i of [...unmanaged, ...outside]) await notifyRevoked(tx, campaign, i, d, []);
  return { logged, items: all.filter((i): i is MappedItem => !originOf(i) && i.scope !== "account") };
}

/** An item a rule of the mapping gives: a grant of the IdP user's (never the whole account). */
/** `campaign.revoked` for one item, naming the groups that gave it (none for an item no rule gives). */
export async function notifyRevoked(
  tx: Queryable,
  campaign: Campaign,
  i: CampaignItem,
  d: Decided,
  groups: string[],
): Promise<void> {
  await notify(
    tx,
    campaignRevoked(d.at, {
      itemId: i.id,
      campaignId: campaign.id,
      campaignName: campaign.name,
      userName: i.userName,
      grant: grantWords(i),
      groups,
      by: d.by,
      comment: d.comment,
    }),
  );
}

export type MappedItem = CampaignItem & { scope: Exclude<CampaignItem["scope"], "account"> };

async function revokeUnmanaged(
  tx: Queryable,
  campaign: Campaign,
  items: readonly CampaignItem[],
  d: Decided,
  removal: Removal,
): Promise<LogEntryInput[]> {
  const logged: LogEntryInput[] = [];
  const queued: string[] = [];
  for (const i of items) {
    const account = await recordUnmanagedRemoval(tx, i.userId, {
      removal,
      by: d.by,
      at: d.at,
      campaignId: campaign.id,
      itemId: i.id,
      comment: d.comment,
    });
    // A delete an admin refused before is replaced by this decision (the new delete waits anew).
    if (account) await deleteHold(tx, i.userId);
    if (account) queued.push(i.userId);
    const todo = !account
      ? "nothing to do: it is no longer an account made by hand (adopted by the IdP, or removed)"
      : removal === "strip"
        ? "to be stripped (one PUT taking its permissions away)"
        : "to be deleted once an admin approves (Approvals)";
    logged.push(entry(campaign, i, d, `${originWords({ unmanaged: unmanagedOf(i)! })} revoked`, todo));
  }
  await markUsersDirty(tx, queued, { kind: "admin", actor: d.by, via: "campaign", campaignId: campaign.id });
  return logged;
}

async function revokeOutside(
  tx: Queryable,
  campaign: Campaign,
  items: readonly CampaignItem[],
  d: Decided,
): Promise<LogEntryInput[]> {
  const logged: LogEntryInput[] = [];
  for (const i of items) {
    const change = await getOutsideChange(tx, i.userId, true);
    if (change?.access) {
      const granted = withoutGrant(change.access.granted, i);
      if (isEmptyAccess(granted) && isEmptyAccess(change.access.withdrawn)) await clearOutsideChange(tx, i.userId);
      else await saveOutsideChange(tx, { ...change, access: { granted, withdrawn: change.access.withdrawn } });
    }
    const words = `${grantWords(i)} (${originWords({ outside: outsideOf(i)! })}) revoked`;
    logged.push(entry(campaign, i, d, words, "the mapping's grants are put back"));
  }
  await markUsersDirty(
    tx,
    items.map((i) => i.userId),
    { kind: "admin", actor: d.by, via: "campaign", campaignId: campaign.id },
  );
  return logged;
}

function entry(campaign: Campaign, i: CampaignItem, d: Decided, what: string, todo: string): LogEntryInput {
  return {
    at: d.at,
    userId: i.userId,
    userName: i.userName,
    action: "revoke",
    outcome: "succeeded",
    trigger: { kind: "campaign", campaignId: campaign.id, itemId: i.id },
    actor: d.by,
    note: `${what} in campaign "${campaign.name}" by ${d.by}: ${d.comment}; ${todo}`,
  };
}
