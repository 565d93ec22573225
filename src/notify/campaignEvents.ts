import type { NotificationInput } from "../db/notify/notificationRepository.js";
import { EVENTS } from "./events.js";

/**
 * The access campaigns' events (src/review/campaigns/): a grant revoked (campaign.revoked), the
 * reminder before the due date (campaign.reminder), and the close (campaign.closed).
 */

/**
 * A reviewer revoked a grant in a campaign: the connector removed it on the platform (a local
 * deny), and the IdP admin is asked to remove the membership at the source (`groups`), which
 * ends the deny. One message per decided item.
 */
export function campaignRevoked(
  now: Date,
  r: {
    itemId: string;
    campaignId: string;
    campaignName: string;
    userName: string;
    grant: string;
    groups: string[];
    by: string;
    comment: string;
  },
): NotificationInput {
  return {
    key: `campaign.revoked:${r.campaignId}:${r.itemId}`,
    event: EVENTS.campaignRevoked,
    occurredAt: now,
    summary: `${r.userName}: ${r.grant} revoked in campaign "${r.campaignName}" by ${r.by}; remove it at the IdP (${r.groups.length ? r.groups.join(", ") : "no IdP group recorded"})`,
    details: {
      campaign: r.campaignName,
      userName: r.userName,
      grant: r.grant,
      groups: r.groups,
      by: r.by,
      comment: r.comment,
    },
    linkPath: `/admin/campaigns/${r.campaignId}`,
  };
}

/** Before the due date: who still has items to decide (once per campaign). */
export function campaignReminder(
  now: Date,
  c: { id: string; name: string; dueAt: Date; open: number; reviewers: Record<string, number> },
): NotificationInput {
  return {
    key: `campaign.reminder:${c.id}`,
    event: EVENTS.campaignReminder,
    occurredAt: now,
    summary: `Campaign "${c.name}" is due ${c.dueAt.toISOString()}: ${c.open} item${c.open === 1 ? "" : "s"} still to review`,
    details: { campaign: c.name, dueAt: c.dueAt.toISOString(), open: c.open, reviewers: c.reviewers },
    linkPath: `/admin/campaigns/${c.id}`,
  };
}

/** A campaign closed (at its due date, or by an admin), with what was left undecided and what was done with it. */
export function campaignClosed(
  now: Date,
  c: { id: string; name: string; kept: number; revoked: number; undecided: number; undecidedAction: string },
): NotificationInput {
  return {
    key: `campaign.closed:${c.id}`,
    event: EVENTS.campaignClosed,
    occurredAt: now,
    summary: `Campaign "${c.name}" closed: ${c.kept} kept, ${c.revoked} revoked, ${c.undecided} undecided (${c.undecidedAction === "revoke" ? "revoked at close" : "kept, reported"})`,
    details: {
      campaign: c.name,
      kept: c.kept,
      revoked: c.revoked,
      undecided: c.undecided,
      undecidedAction: c.undecidedAction,
    },
    linkPath: `/admin/campaigns/${c.id}`,
  };
}
