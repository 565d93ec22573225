import { Readable, type Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { csvLine } from "../csv.js";
import { describeReason } from "./grants.js";
import { notManagedWords, unmanagedAccessRows, type UnmanagedAccessRow } from "./unmanaged.js";
import {
  accessRows,
  type AccessQuery,
  type AccessReportOptions,
  type AccessRow,
  type AccessRowDeny,
} from "./report.js";

/**
 * The access report as a file, streamed batch by batch with backpressure: memory stays one batch
 * of accounts whatever the report's size. CSV cells are quoted and a formula trigger is neutralised
 * wherever a spreadsheet could see a cell start (src/review/csv.ts).
 */

const ACCESS_CSV_COLUMNS = [
  "userName",
  "scope",
  "workspace",
  "team",
  "permission",
  "groups",
  "rules",
  // What the row grants: a granular bundle's strings (one row for them all), or its one string.
  // Here, not at the end, so that the columns read from either end keep their places.
  "permissions",
  "count",
  // What the platform's own record says (docs/platform-record.md), as it stands now (empty in a
  // report as of a past moment). In the middle too, so the columns read from either end keep their places.
  "lastSignInAt",
  "suspended",
  "grantedOutside",
  "firstAppliedAt",
  "appliedByLogId",
  "verified",
  "reasonsAsOf",
  "denied",
] as const;

function accessCsvLine(row: AccessRow): string {
  const rules = row.reasons.map(describeReason);
  const groups = [...new Set(row.reasons.flatMap((r) => ("rule" in r ? r.groups : [])))];
  const cells = [
    row.userName,
    row.scope,
    row.workspace,
    row.team,
    row.permission,
    groups.join("; "),
    rules.length
      ? rules.join("; ")
      : row.appliedByLogId
        ? `no rule in force gives it; applied by log entry ${row.appliedByLogId}`
        : "",
    row.permissions.join(" "),
    row.count,
    row.lastSignInAt?.toISOString() ?? "",
    row.suspended ?? "",
    row.outside ?? "",
    row.firstAppliedAt?.toISOString() ?? "before the log's retention",
    row.appliedByLogId,
    row.verifiedAt?.toISOString() ?? "not verified since",
    row.reasonsAsOf,
    row.deny ? deniedWords(row.deny) : "",
  ];
  return csvLine(cells);
}

/** An account made by hand: its reason in the `rules` column, its confirming lookup as its verification. */
function unmanagedCsvLine(row: UnmanagedAccessRow): string {
  const { notManagedByIdp: facts } = row;
  return csvLine([
    row.userName,
    row.scope,
    row.workspace,
    row.team,
    row.permission,
    "",
    notManagedWords(row),
    row.permission,
    1,
    facts.firstSeen,
    "",
    facts.confirmedAt ?? "not verified since",
    "current",
    "",
  ]);
}

/** An account made by hand in the JSON export: an access row's fields (no user id, no reason), and what is known of it. */
function unmanagedJson(row: UnmanagedAccessRow) {
  return {
    userId: null,
    userName: row.userName,
    scope: row.scope,
    workspace: row.workspace,
    team: row.team,
    permission: row.permission,
    permissions: [row.permission],
    count: 1,
    reasons: [],
    reasonsAsOf: "current",
    firstAppliedAt: row.notManagedByIdp.firstSeen,
    appliedByLogId: null,
    verifiedAt: row.notManagedByIdp.confirmedAt,
    deny: null,
    notManagedByIdp: row.notManagedByIdp,
  };
}

/** A deny in the CSV's `denied` column: its words and the reviewer's comment. */
function deniedWords(deny: AccessRowDeny): string {
  const where = deny.onPlatform ? " (still on the platform: its removal is queued)" : "";
  return `${deny.words}${where}: ${deny.comment}`;
}

/**
 * Writes the whole report to `out` (not ended); resolves with the number of rows. Through
 * `pipeline`, so a reader that goes away (a closed download) destroys the source: the batches
 * being read are dropped and the promise rejects, instead of waiting for a drain that never comes.
 */
export async function writeAccessReport(
  options: AccessReportOptions,
  query: AccessQuery,
  format: "csv" | "json",
  out: Writable,
): Promise<number> {
  let count = 0;
  async function* text(): AsyncGenerator<string> {
    yield format === "csv" ? `${ACCESS_CSV_COLUMNS.join(",")}\r\n` : "[";
    for await (const batch of accessRows(options, query)) {
      let chunk = "";
      for (const row of batch) {
        chunk += format === "csv" ? accessCsvLine(row) : `${count ? "," : ""}\n${JSON.stringify(row)}`;
        count++;
      }
      yield chunk;
    }
    // After the IdP's users: the accounts made by hand on the platform, "not managed by the IdP".
    let chunk = "";
    for (const row of await unmanagedAccessRows(options.db, query)) {
      chunk += format === "csv" ? unmanagedCsvLine(row) : `${count ? "," : ""}\n${JSON.stringify(unmanagedJson(row))}`;
      count++;
    }
    yield chunk;
    if (format === "json") yield "\n]\n";
  }
  // Bytes, not objects: the source then holds one chunk ahead, not sixteen batches.
  await pipeline(Readable.from(text(), { objectMode: false }), out, { end: false });
  return count;
}
