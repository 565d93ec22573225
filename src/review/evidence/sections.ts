import { logWindow, type EvidenceLogEntry } from "../../db/review/evidenceRepository.js";
import type { Change } from "../../reconcile/diff.js";
import { writeAccessReport } from "../access/export.js";
import { triggerLabel } from "../../vocabulary/reconcile.js";
import { campaignFiles } from "./campaigns.js";
import { listConfirmedUnmanaged, type UnmanagedAccountView } from "../../platformRecord/unmanaged.js";
import { write, writeCsv, type CsvColumns, type EvidenceFile, type EvidenceSection } from "./output.js";

export type { EvidenceSection, EvidenceWindow } from "./output.js";

/**
 * The evidence pack's contents, as a list of sections (docs/access-review.md, "Evidence"). Each
 * file names the controls it evidences; the campaigns' files are in campaigns.ts.
 */

/** An entry's changes in words; a created or removed account's field-by-field changes are left out. */
function changesInWords(changes: Change[]): string {
  const account = changes.some((c) => c.kind === "account");
  return changes
    .filter((c) => !(account && c.kind === "set"))
    .map(changeInWords)
    .join("; ");
}

/** One change in words, as an auditor reads it. */
function changeInWords(change: Change): string {
  if (change.kind === "account") return change.new === "present" ? "account created" : "account removed";
  if (change.kind === "set") return `${change.path} changed from "${change.old ?? ""}" to "${change.new ?? ""}"`;
  const parts = [
    ...(change.added.length ? [`granted ${change.added.join(", ")}`] : []),
    ...(change.removed.length ? [`removed ${change.removed.join(", ")}`] : []),
  ];
  return `${change.path}: ${parts.join("; ")}`;
}

/** A successful entry that took access away: a deprovision, or an update that removed a permission. */
function isReduction(entry: EvidenceLogEntry): boolean {
  if (entry.outcome !== "succeeded") return false;
  if (entry.action === "deprovision") return true;
  return entry.changes.some(
    (c) => (c.kind === "account" && c.new === "absent") || (c.kind === "permissions" && c.removed.length > 0),
  );
}

const latencyMs = (e: EvidenceLogEntry) => (e.queuedAt ? e.at.getTime() - e.queuedAt.getTime() : null);

const accessAt = (which: "from" | "to"): EvidenceFile => ({
  path: `access/access-${which === "from" ? "at-start" : "at-end"}.csv`,
  description: `The access report (who held what on the platform, and why) as of the window's ${which === "from" ? "start" : "end"}`,
  controls: ["SOC2 CC6.1", "SOC2 CC6.2", "ISO27001 A.5.15", "ISO27001 A.5.18"],
  async write(context, out) {
    await writeAccessReport(context.access, { at: context.window[which] }, "csv", out);
  },
});

const NOT_MANAGED_COLUMNS: CsvColumns<UnmanagedAccountView> = {
  userName: (a) => a.userName,
  holds: (a) => a.holds.join("; "),
  addedBy: (a) => a.addedBy,
  firstSeen: (a) => a.firstSeen,
  confirmedAt: (a) => a.confirmedAt,
  platformId: (a) => a.platformId,
};

/** Accounts made by hand on the platform, known when the pack is written (the record says no more of the past). */
const notManaged: EvidenceFile = {
  path: "access/not-managed-by-idp.csv",
  description:
    "Accounts on the platform that the IdP does not manage (made by hand, found in the platform's record and confirmed by a lookup), with what they held when confirmed",
  controls: ["SOC2 CC6.1", "SOC2 CC6.2", "ISO27001 A.5.15", "ISO27001 A.5.18"],
  async write({ db }, out) {
    await writeCsv(out, NOT_MANAGED_COLUMNS, [await listConfirmedUnmanaged(db)]);
  },
};

const CHANGE_COLUMNS: CsvColumns<EvidenceLogEntry> = {
  logId: (e) => e.id,
  at: (e) => e.at.toISOString(),
  userName: (e) => e.userName,
  action: (e) => e.action,
  outcome: (e) => e.outcome,
  why: (e) => triggerLabel(e.trigger),
  what: (e) => changesInWords(e.changes),
  actor: (e) => e.actor,
  error: (e) => e.error,
  note: (e) => e.note,
  chainHash: (e) => e.chainHash,
};

const changes: EvidenceFile = {
  path: "changes/changes.csv",
  description: "Every reconciliation-log entry in the window, in words, with its chain hash",
  controls: ["SOC2 CC6.2", "SOC2 CC6.3", "ISO27001 A.5.16", "ISO27001 A.5.18"],
  async write({ db, window }, out) {
    await writeCsv(out, CHANGE_COLUMNS, logWindow(db, window.from, window.to));
  },
};

const REVOCATION_COLUMNS: CsvColumns<EvidenceLogEntry> = {
  logId: (e) => e.id,
  userName: (e) => e.userName,
  what: (e) => changesInWords(e.changes) || e.action,
  why: (e) => triggerLabel(e.trigger),
  queuedAt: (e) => e.queuedAt?.toISOString() ?? "not recorded",
  appliedAt: (e) => e.at.toISOString(),
  latencyMs: (e) => latencyMs(e) ?? "",
};

const revocations: EvidenceFile = {
  path: "revocations/revocations.csv",
  description:
    "Each removal or reduction of access in the window, when it was asked for and when the platform applied it",
  controls: ["SOC2 CC6.2", "SOC2 CC6.3", "ISO27001 A.5.18"],
  async write({ db, window }, out) {
    await writeCsv(out, REVOCATION_COLUMNS, logWindow(db, window.from, window.to), isReduction);
  },
};

/** Nearest-rank percentile of sorted values. */
const percentile = (sorted: number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! : null;

const latency: EvidenceFile = {
  path: "revocations/latency.json",
  description: "How long reductions took from the change being queued to the platform applying it (p50, p95, p99, max)",
  controls: ["SOC2 CC6.3", "ISO27001 A.5.18"],
  async write({ db, window }, out) {
    const figures: number[] = [];
    let unrecorded = 0;
    for await (const batch of logWindow(db, window.from, window.to))
      for (const e of batch.filter(isReduction)) {
        const ms = latencyMs(e);
        if (ms === null) unrecorded++;
        else figures.push(ms);
      }
    figures.sort((a, b) => a - b);
    const summary = {
      reductions: figures.length + unrecorded,
      withoutQueueTime: unrecorded,
      latencyMs: {
        p50: percentile(figures, 50),
        p95: percentile(figures, 95),
        p99: percentile(figures, 99),
        max: figures.at(-1) ?? null,
      },
    };
    await write(out, `${JSON.stringify(summary, null, 2)}\n`);
  },
};

const mappingFile: EvidenceFile = {
  path: "mapping/mapping-in-force.yaml",
  description: "The mapping (IdP groups to platform permissions) in force when the pack was written, with its hash",
  controls: ["SOC2 CC6.1", "ISO27001 A.5.15"],
  async write({ db, access }, out) {
    const mapping = await access.desired.record(db);
    await write(
      out,
      mapping
        ? `# sha256 ${mapping.hash}, applied ${mapping.appliedAt.toISOString()}\n${mapping.sourceText}`
        : "# no mapping has been applied\n",
    );
  },
};

const MAPPING_CHANGE_COLUMNS: CsvColumns<EvidenceLogEntry> = {
  logId: (e) => e.id,
  at: (e) => e.at.toISOString(),
  outcome: (e) => e.outcome,
  what: (e) => triggerLabel(e.trigger),
  actor: (e) => e.actor,
};

const mappingChanges: EvidenceFile = {
  path: "mapping/mapping-changes.csv",
  description: "The mapping versions applied during the window (the log's mapping entries)",
  controls: ["SOC2 CC6.1", "ISO27001 A.5.15"],
  async write({ db, window }, out) {
    await writeCsv(out, MAPPING_CHANGE_COLUMNS, logWindow(db, window.from, window.to), (e) => e.action === "mapping");
  },
};

export const EVIDENCE_SECTIONS: EvidenceSection[] = [
  { name: "access", files: [accessAt("from"), accessAt("to"), notManaged] },
  { name: "changes", files: [changes] },
  { name: "revocations", files: [revocations, latency] },
  { name: "mapping", files: [mappingFile, mappingChanges] },
  { name: "campaigns", files: campaignFiles },
];
