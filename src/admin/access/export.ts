import { once } from "node:events";
import type { Writable } from "node:stream";
import { csvCell } from "../csv.js";
import { describeReason } from "./grants.js";
import { accessRows, type AccessQuery, type AccessReportOptions, type AccessRow } from "./report.js";

/**
 * The access report as a file, streamed batch by batch with backpressure: memory stays one batch
 * of accounts whatever the report's size. CSV cells are quoted and a formula trigger is neutralised
 * wherever a spreadsheet could see a cell start (src/admin/csv.ts).
 */

const ACCESS_CSV_COLUMNS = [
  "userName",
  "scope",
  "workspace",
  "team",
  "permission",
  "groups",
  "rules",
  "firstAppliedAt",
  "appliedByLogId",
  "verified",
  "reasonsAsOf",
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
    row.firstAppliedAt?.toISOString() ?? "before the log's retention",
    row.appliedByLogId,
    row.verifiedAt?.toISOString() ?? "not verified since",
    row.reasonsAsOf,
  ];
  return `${cells.map(csvCell).join(",")}\r\n`;
}

/** Writes the whole report to `out` (not ended); resolves with the number of rows. */
export async function writeAccessReport(
  options: AccessReportOptions,
  query: AccessQuery,
  format: "csv" | "json",
  out: Writable,
): Promise<number> {
  const write = async (text: string) => {
    if (!out.write(text)) await once(out, "drain");
  };
  let count = 0;
  await write(format === "csv" ? `${ACCESS_CSV_COLUMNS.join(",")}\r\n` : "[");
  for await (const batch of accessRows(options, query)) {
    let chunk = "";
    for (const row of batch) {
      chunk += format === "csv" ? accessCsvLine(row) : `${count ? "," : ""}\n${JSON.stringify(row)}`;
      count++;
    }
    await write(chunk);
  }
  if (format === "json") await write("\n]\n");
  return count;
}
