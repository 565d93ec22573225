import {
  campaignsInWindow,
  decisionsWindow,
  type EvidenceCampaign,
  type EvidenceDecision,
} from "../../db/review/evidenceRepository.js";
import type { Queryable } from "../../db/database.js";
import { reviewerKey } from "../../db/campaigns/campaignRepository.js";
import { bundlesOfDecisions } from "../../db/campaigns/decisionRepository.js";
import { grantWords } from "../../reconcile/desiredSource.js";
import { writeCsv, type CsvColumns, type EvidenceFile } from "./output.js";

/**
 * The evidence pack's campaigns section (docs/access-review.md, "Evidence"): the campaigns open
 * in the window, every decision taken in it (from the chained record, with its chain hash), and
 * how long each campaign revocation took to reach the platform.
 */

const CONTROLS = ["SOC2 CC6.2", "SOC2 CC6.3", "ISO27001 A.5.18"];

const CAMPAIGN_COLUMNS: CsvColumns<EvidenceCampaign> = {
  campaignId: (c) => c.id,
  name: (c) => c.name,
  scope: (c) => JSON.stringify(c.scope),
  reviewers: (c) => c.reviewers.map((r) => `${reviewerKey(r)}${r.workspace ? ` for ${r.workspace}` : ""}`).join("; "),
  fallbackReviewer: (c) => c.fallbackReviewer,
  startedBy: (c) => c.startedBy,
  startedAt: (c) => c.startedAt.toISOString(),
  dueAt: (c) => c.dueAt.toISOString(),
  closedAt: (c) => c.closedAt?.toISOString() ?? "",
  closedBy: (c) => c.closedBy ?? "",
  items: (c) => c.items,
  kept: (c) => c.kept,
  revoked: (c) => c.revoked,
  undecided: (c) => c.items - c.kept - c.revoked,
  undecidedAtClose: (c) => c.undecidedAction ?? "",
};

const campaigns: EvidenceFile = {
  path: "campaigns/campaigns.csv",
  description:
    "The access reviews open at some time in the window: scope, reviewers, due date, and their items kept, revoked and undecided as of the window's end",
  controls: CONTROLS,
  async write({ db, window }, out) {
    await writeCsv(out, CAMPAIGN_COLUMNS, [await campaignsInWindow(db, window.from, window.to)]);
  },
};

/** A decision with the strings of the bundle it decided (null: one string, role or set). */
type DecisionRow = EvidenceDecision & { bundle: string[] | null };

/** The decisions' batches with their bundles (one look-up per batch). */
async function* withBundles(db: Queryable, batches: AsyncIterable<EvidenceDecision[]>): AsyncGenerator<DecisionRow[]> {
  for await (const batch of batches) {
    const bundles = await bundlesOfDecisions(
      db,
      batch.map((d) => d.id),
    );
    yield batch.map((d) => ({ ...d, bundle: bundles.get(d.id) ?? null }));
  }
}

/** What a decision decided: a bundle's strings (one row per item, not per string), or the one granted. */
const PERMISSION_COLUMNS: CsvColumns<DecisionRow> = {
  permissions: (d) => (d.bundle ?? [d.permission]).join(" "),
  count: (d) => d.bundle?.length ?? 1,
};

const DECISION_COLUMNS: CsvColumns<DecisionRow> = {
  decisionId: (d) => d.id,
  campaignId: (d) => d.campaignId,
  campaign: (d) => d.campaignName,
  itemId: (d) => d.itemId,
  userName: (d) => d.userName,
  grant: (d) => grantWords(d),
  ...PERMISSION_COLUMNS,
  reviewer: (d) => d.reviewer,
  decision: (d) => d.decision,
  decidedBy: (d) => d.decidedBy,
  decidedAt: (d) => d.decidedAt.toISOString(),
  comment: (d) => d.comment,
  chainHash: (d) => d.chainHash,
};

const decisions: EvidenceFile = {
  path: "campaigns/decisions.csv",
  description:
    "Every campaign decision taken in the window (keep, revoke, or undecided at the close): who decided, when, the comment, and its chain hash",
  controls: CONTROLS,
  async write({ db, window }, out) {
    await writeCsv(out, DECISION_COLUMNS, withBundles(db, decisionsWindow(db, window.from, window.to)));
  },
};

const latencyMs = (d: EvidenceDecision) => (d.appliedAt ? d.appliedAt.getTime() - d.decidedAt.getTime() : null);

const REVOCATION_COLUMNS: CsvColumns<DecisionRow> = {
  decisionId: (d) => d.id,
  campaign: (d) => d.campaignName,
  userName: (d) => d.userName,
  grant: (d) => grantWords(d),
  ...PERMISSION_COLUMNS,
  decidedBy: (d) => d.decidedBy,
  decidedAt: (d) => d.decidedAt.toISOString(),
  comment: (d) => d.comment,
  appliedLogId: (d) => d.appliedLogId ?? "",
  appliedAt: (d) => d.appliedAt?.toISOString() ?? "not applied yet",
  latencyMs: (d) => latencyMs(d) ?? "",
};

const revocations: EvidenceFile = {
  path: "campaigns/campaign-revocations.csv",
  description:
    "Each campaign revoke in the window and how long it took to reach the platform: from the decision to the log entry that applied the user's next change",
  controls: CONTROLS,
  async write({ db, window }, out) {
    await writeCsv(out, REVOCATION_COLUMNS, withBundles(db, decisionsWindow(db, window.from, window.to, true)));
  },
};

export const campaignFiles: EvidenceFile[] = [campaigns, decisions, revocations];
