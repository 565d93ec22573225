import type { Response } from "express";
import type { LogRow } from "../../admin/log.js";
import { csvCell } from "../../review/csv.js";

/** The filtered log as a download. CSV cells that start with = + - @ are prefixed so spreadsheets don't run them. */
export function sendLogExport(res: Response, format: "csv" | "json", rows: LogRow[]): void {
  const stamp = new Date().toISOString().slice(0, 10);
  res.setHeader("Content-Disposition", `attachment; filename="reconciliation-log-${stamp}.${format}"`);
  if (format === "json") {
    res.type("application/json").send(JSON.stringify(rows, null, 2));
    return;
  }
  const header = [
    "id",
    "at",
    "userName",
    "action",
    "outcome",
    "trigger",
    "platformStatus",
    "callsSpent",
    "actor",
  ] as const;
  const lines = [header.join(",")];
  for (const row of rows) {
    lines.push(header.map((key) => csvCell(key === "at" ? row.at.toISOString() : row[key])).join(","));
  }
  res.type("text/csv").send(`${lines.join("\r\n")}\r\n`);
}
