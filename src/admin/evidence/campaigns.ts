import { campaignsInWindow, decisionsWindow, type EvidenceDecision } from "../../db/evidenceRepository.js";
import { reviewerKey } from "../../db/campaignRepository.js";
import { grantWords } from "../../reconcile/desiredSource.js";
import { csvLine, write, type EvidenceFile } from "./output.js";

/**
 * The evidence pack's campaigns section (docs/access-review.md, "Evidence"): the campaigns open
 * in the window, every decision taken in it (from the chained record, with its chain hash), and
 * how long each campaign revocation took to reach the platform.
 */

const CONTROLS = ["SOC2 CC6.2", "SOC2 CC6.3", "ISO27001 A.5.18"];

const campaigns: EvidenceFile = {
  path: "campaigns/campaigns.csv",
  description:
    "The access reviews open at some time in the window: scope, reviewers, due date, and their items kept, revoked and undecided as of the window's end",
  controls: CONTROLS,
  async write({ db, window }, out) {
    await write(
      out,
      csvLine([
        "campaignId",
        "name",
        "scope",
        "reviewers",
        "fallbackReviewer",
        "startedBy",
        "startedAt",
        "dueAt",
        "closedAt",
        "closedBy",
        "items",
        "kept",
        "revoked",
        "undecided",
        "undecidedAtClose",
      ]),
    );
    for (const c of await campaignsInWindow(db, window.from, window.to))
      await write(
        out,
        csvLine([
          c.id,
          c.name,
          JSON.stringify(c.scope),
          c.reviewers.map((r) => `${reviewerKey(r)}${r.workspace ? ` for ${r.workspace}` : ""}`).join("; "),
          c.fallbackReviewer,
          c.startedBy,
          c.startedAt.toISOString(),
          c.dueAt.toISOString(),
          c.closedAt?.toISOString() ?? "",
          c.closedBy ?? "",
          c.items,
          c.kept,
          c.revoked,
          c.items - c.kept - c.revoked,
          c.undecidedAction ?? "",
        ]),
      );
  },
};

const decisions: EvidenceFile = {
  path: "campaigns/decisions.csv",
  description:
    "Every campaign decision taken in the window (keep, revoke, or undecided at the close): who decided, when, the comment, and its chain hash",
  controls: CONTROLS,
  async write({ db, window }, out) {
    await write(
      out,
      csvLine([
        "decisionId",
        "campaignId",
        "campaign",
        "itemId",
        "userName",
        "grant",
        "reviewer",
        "decision",
        "decidedBy",
        "decidedAt",
        "comment",
        "chainHash",
      ]),
    );
    for await (const batch of decisionsWindow(db, window.from, window.to))
      await write(
        out,
        batch
          .map((d) =>
            csvLine([
              d.id,
              d.campaignId,
              d.campaignName,
              d.itemId,
              d.userName,
              grantWords(d),
              d.reviewer,
              d.decision,
              d.decidedBy,
              d.decidedAt.toISOString(),
              d.comment,
              d.chainHash,
            ]),
          )
          .join(""),
      );
  },
};

const latencyMs = (d: EvidenceDecision) => (d.appliedAt ? d.appliedAt.getTime() - d.decidedAt.getTime() : null);

const revocations: EvidenceFile = {
  path: "campaigns/campaign-revocations.csv",
  description:
    "Each campaign revoke in the window and how long it took to reach the platform: from the decision to the log entry that applied the user's next change",
  controls: CONTROLS,
  async write({ db, window }, out) {
    await write(
      out,
      csvLine([
        "decisionId",
        "campaign",
        "userName",
        "grant",
        "decidedBy",
        "decidedAt",
        "comment",
        "appliedLogId",
        "appliedAt",
        "latencyMs",
      ]),
    );
    for await (const batch of decisionsWindow(db, window.from, window.to, true))
      await write(
        out,
        batch
          .map((d) =>
            csvLine([
              d.id,
              d.campaignName,
              d.userName,
              grantWords(d),
              d.decidedBy,
              d.decidedAt.toISOString(),
              d.comment,
              d.appliedLogId ?? "",
              d.appliedAt?.toISOString() ?? "not applied yet",
              latencyMs(d) ?? "",
            ]),
          )
          .join(""),
      );
  },
};

export const campaignFiles: EvidenceFile[] = [campaigns, decisions, revocations];
