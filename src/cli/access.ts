import type { Writable } from "node:stream";
import { parseArgs } from "node:util";
import type { Database } from "../db/database.js";
import { createAccessReport } from "../admin/access/index.js";
import type { Env } from "../config/env.js";

/**
 * `scim-connector access-report [--at DATE] [--workspace NAME] [--format csv|json]`: the access
 * report (docs/access-review.md) on stdout, streamed. Reads the database only. A bare date means
 * the end of that day (UTC): "who had admin on 30 June" is `--at 2026-06-30`.
 */
export async function accessReportCommand(
  env: Env,
  db: Database,
  args: string[],
  out: Writable = process.stdout,
): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { at: { type: "string" }, workspace: { type: "string" }, format: { type: "string" } },
  });
  const format = values.format ?? "csv";
  if (format !== "csv" && format !== "json") throw new Error("--format must be csv or json");
  const at = values.at === undefined ? undefined : parseAt(values.at);
  const report = createAccessReport({ db, mappingFile: env.MAPPING_FILE });
  const rows = await report.export(
    { ...(at ? { at } : {}), ...(values.workspace ? { workspace: values.workspace } : {}) },
    format,
    out,
  );
  process.stderr.write(`${rows} grant(s)${at ? ` as of ${at.toISOString()}` : ""}.\n`);
}

function parseAt(text: string): Date {
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(text);
  const at = new Date(dateOnly ? `${text}T23:59:59.999Z` : text);
  if (!/^\d{4}-\d{2}-\d{2}/.test(text) || Number.isNaN(at.getTime()))
    throw new Error(`--at must be an ISO 8601 date or time (2026-06-30 or 2026-06-30T12:00:00Z), not "${text}"`);
  return at;
}
