import type { Queryable } from "../../db/database.js";
import {
  countCampaignItems,
  getCampaign,
  listCampaignsDue,
  listCampaignsToRemind,
  markCampaignClosed,
  markCampaignReminded,
  type Campaign,
} from "../../db/campaigns/campaignRepository.js";
import {
  lockOpenItems,
  recordDecisions,
  undecidedItems,
  type CampaignItem,
} from "../../db/campaigns/itemRepository.js";
import { appendDecisions, appendUndecided } from "../../db/campaigns/decisionRepository.js";
import { endDeniesWithTheirBundles, insertDenies } from "../../db/campaigns/denyRepository.js";
import { markUsersDirty } from "../../db/reconcile/queueRepository.js";
import { writeLogEntry, type LogEntryInput } from "../../db/reconcile/logRepository.js";
import { ConflictError, ForbiddenError, NotFoundError } from "../../errors.js";
import { can } from "../../policy.js";
import { notify } from "../../notify/events.js";
import { campaignClosed, campaignReminder } from "../../notify/campaignEvents.js";
import { grantWords } from "../../reconcile/desiredSource.js";
import { campaignOr404, deciderOf, keysOf, type CampaignDeps, type DecideInput, type Reviewer } from "./common.js";
import { groupsOf, presentCampaign, presentDeny } from "./present.js";
import { notifyRevoked, revokeByOrigin, type Removal } from "./origins.js";

/**
 * Decisions on a campaign's items, its close, lifting a deny, and the scheduler's pass (reminders,
 * closing at the due date). Each transaction appends to the hash chains last (the decisions'
 * chain, then the log's): a transaction holding a chain's head never waits for another lock.
 */

/**
 * Records keep or revoke on items still open. A reviewer decides their own items; an admin any.
 * Each revoke opens a deny, is logged in words, marks the user dirty (not held by the settle
 * window: an admin trigger) and is notified (`campaign.revoked`). Every record names the decider
 * with the principal that acted for the reviewer, if any (deciderOf).
 */
export async function decideItems(deps: CampaignDeps, id: string, who: Reviewer, input: DecideInput) {
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    const campaign = await campaignOr404(tx, id, true);
    if (campaign.closedAt) throw new ConflictError(`Campaign "${campaign.name}" is closed`);
    const items = await lockOpenItems(tx, id, input.items);
    const mine = new Set(keysOf(who));
    const foreign = items.filter((i) => !mine.has(i.reviewer));
    if (foreign.length && !can(who.role, "reviewAnyone"))
      throw new ForbiddenError(`Items ${foreign.map((i) => i.id).join(", ")} are for another reviewer`);
    const decided = items.map((i) => i.id);
    const decision = { decision: input.decision, comment: input.comment ?? null, by: deciderOf(who), at: now };
    await recordDecisions(tx, id, decided, decision);
    const logged =
      input.decision === "revoke"
        ? await revoke(tx, campaign, items, { ...decision, comment: input.comment! }, input.removal ?? "strip")
        : [];
    await appendDecisions(tx, id, decided, decision);
    for (const entry of logged) await writeLogEntry(tx, entry);
    const skipped = input.items.filter((i) => !decided.includes(i));
    return { decided: decided.length, decision: input.decision, skipped };
  });
}

/**
 * Opens the denies of revoked items, notifies and queues their users; answers the log entries the
 * caller writes once the decisions are chained (the log's chain head is the transaction's last lock).
 * A bundle is denied string by string (the desired state drops each: src/mapping/denies.ts), each
 * deny naming the bundle; the notice and the log entry name the bundle once.
 */
async function revoke(
  tx: Queryable,
  campaign: Campaign,
  all: readonly CampaignItem[],
  d: { by: string; comment: string; at: Date },
  removal: Removal,
): Promise<LogEntryInput[]> {
  if (!all.length) return [];
  // Items no rule gives (an account made by hand, a grant made in the dashboard) open no deny.
  const { logged, items } = await revokeByOrigin(tx, campaign, all, d, removal);
  if (!items.length) return logged;
  await insertDenies(
    tx,
    items.flatMap((i) =>
      (i.bundle ?? [i.permission]).map((permission) => ({
        userId: i.userId,
        userName: i.userName,
        scope: i.scope,
        workspace: i.workspace,
        team: i.team,
        permission,
        partOf: i.bundle ? i.permission : null,
        campaignId: campaign.id,
        campaignName: campaign.name,
        itemId: i.id,
        decidedBy: d.by,
        decidedAt: d.at,
        comment: d.comment,
      })),
    ),
  );
  for (const i of items) await notifyRevoked(tx, campaign, i, d, groupsOf(i));
  await markUsersDirty(
    tx,
    items.map((i) => i.userId),
    { kind: "admin", actor: d.by, via: "campaign", campaignId: campaign.id },
  );
  return [
    ...logged,
    ...items.map((i) => ({
      at: d.at,
      userId: i.userId,
      userName: i.userName,
      action: "revoke" as const,
      outcome: "succeeded" as const,
      trigger: { kind: "campaign", campaignId: campaign.id, itemId: i.id },
      actor: d.by,
      note: `${grantWords(i)} revoked in campaign "${campaign.name}" by ${d.by}: ${d.comment}`,
    })),
  ];
}

/**
 * Closes a campaign: undecided items are kept and reported (CAMPAIGN_UNDECIDED_AT_CLOSE=keep, the
 * default) or revoked. Idempotent: a closed campaign answers its summary.
 */
export async function closeCampaign(
  deps: CampaignDeps,
  id: string,
  closedBy: string,
  undecidedAction: "keep" | "revoke",
) {
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    const campaign = await campaignOr404(tx, id, true);
    if (campaign.closedAt) return presentCampaign(campaign);
    // Kept items need only their count: a campaign of 500,000 items closes without loading them.
    const undecided = undecidedAction === "revoke" ? await undecidedItems(tx, id) : [];
    const logged: LogEntryInput[] = [];
    const atClose = { comment: `undecided when the campaign closed (${now.toISOString()})`, by: closedBy, at: now };
    if (undecidedAction === "revoke") {
      await recordDecisions(
        tx,
        id,
        undecided.map((i) => i.id),
        { decision: "revoke", ...atClose },
      );
      // An account made by hand left undecided is stripped, never deleted: a delete is a reviewer's choice.
      logged.push(...(await revoke(tx, campaign, undecided, atClose, "strip")));
    }
    const counts = await countCampaignItems(tx, id);
    const summary = {
      kept: counts.kept,
      revoked: counts.revoked,
      // Kept undecided items are still open; revoked ones were just decided.
      undecided: undecidedAction === "revoke" ? undecided.length : counts.open,
      undecidedAction,
    };
    await markCampaignClosed(tx, id, { at: now, by: closedBy, summary });
    await notify(tx, campaignClosed(now, { id, name: campaign.name, ...summary }));
    const closed = presentCampaign((await getCampaign(tx, id))!);
    if (undecidedAction === "revoke")
      await appendDecisions(
        tx,
        id,
        undecided.map((i) => i.id),
        { decision: "revoke", ...atClose },
      );
    else
      await appendUndecided(tx, id, {
        ...atClose,
        comment: `${atClose.comment}; kept (CAMPAIGN_UNDECIDED_AT_CLOSE=keep)`,
      });
    for (const entry of logged) await writeLogEntry(tx, entry);
    await writeLogEntry(tx, {
      at: now,
      action: "campaign",
      outcome: "succeeded",
      trigger: { kind: "campaign", campaignId: id },
      actor: closedBy,
      note: `campaign "${campaign.name}" closed by ${closedBy}: ${summary.kept} kept, ${summary.revoked} revoked, ${summary.undecided} undecided (${undecidedAction === "keep" ? "kept, reported" : "revoked at close"})`,
    });
    return closed;
  });
}

/**
 * An admin lifts a deny (with the rest of its bundle: what was revoked as one item comes back as
 * one): the mapping's grant comes back at the user's next reconcile (queued now).
 */
export async function liftDeny(deps: CampaignDeps, denyId: string, by: string) {
  if (!/^\d{1,18}$/.test(denyId)) throw new NotFoundError("No deny with that id");
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    const lifted = await endDeniesWithTheirBundles(tx, [denyId], { at: now, reason: "lifted", by });
    const ended = lifted.find((d) => d.id === denyId) ?? lifted[0];
    if (!ended) throw new NotFoundError("No active deny with that id");
    const shown = presentDeny(ended, lifted);
    await markUsersDirty(tx, [ended.userId], { kind: "admin", actor: by });
    await writeLogEntry(tx, {
      at: now,
      userId: ended.userId,
      userName: ended.userName,
      action: "deny-ended",
      outcome: "succeeded",
      trigger: { kind: "admin", actor: by },
      actor: by,
      note: `deny lifted by ${by}: ${shown.grant} (revoked in campaign "${ended.campaignName}" by ${ended.decidedBy} on ${ended.decidedAt.toISOString()}) may be granted again`,
    });
    return shown;
  });
}

/**
 * The scheduler's pass: reminds reviewers with open items `remindMs` before the due date (once
 * per campaign), and closes campaigns at their due date.
 */
export async function campaignPass(
  deps: CampaignDeps,
  settings: { remindMs: number; undecidedAction: "keep" | "revoke" },
): Promise<{ reminded: number; closed: number }> {
  const now = deps.clock.now();
  let reminded = 0;
  if (settings.remindMs > 0) {
    for (const c of await listCampaignsToRemind(deps.db, now, settings.remindMs)) {
      await deps.db.transaction(async (tx) => {
        if (!(await markCampaignReminded(tx, c.id, now))) return;
        const counts = await countCampaignItems(tx, c.id);
        if (counts.open === 0) return;
        await notify(
          tx,
          campaignReminder(now, {
            id: c.id,
            name: c.name,
            dueAt: c.dueAt,
            open: counts.open,
            reviewers: counts.byReviewer,
          }),
        );
        reminded++;
      });
    }
  }
  let closed = 0;
  for (const c of await listCampaignsDue(deps.db, now)) {
    await closeCampaign(deps, c.id, "scheduler (due date)", settings.undecidedAction);
    closed++;
  }
  return { reminded, closed };
}
