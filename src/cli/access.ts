import type { Writable } from "node:stream";
import { parseArgs } from "node:util";
import type { Database } from "../db/database.js";
import { createAccessReport } from "../review/access/index.js";
import { DesiredAccess } from "../mapping/desiredAccess.js";
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
  // The mapping in force as recorded: the report needs no mapping file on this machine.
  const report = createAccessReport({ db, desired: DesiredAccess.recordedOnly(env.MAPPING_FILE) });
  const rows = await report.export(
    { ...(at ? { at } : {}), ...(values.workspace ? { workspace: values.workspace } : {}) },
    format,
    out,
  );
  process.stderr.write(`${rows} grant(s)${at ? ` as of ${at.toISOString()}` : ""}.\n`);
}

// A time must say its offset, as the API's `at` must: without one, Date would read it in the machine's zone.
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const TIME_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i;

function parseAt(text: string): Date {
  const dateOnly = DATE_ONLY.test(text);
  const at = new Date(dateOnly ? `${text}T23:59:59.999Z` : text);
  if (!(dateOnly || TIME_WITH_OFFSET.test(text)) || Number.isNaN(at.getTime()))
    throw new Error(
      `--at must be an ISO 8601 date, or a time with its offset (2026-06-30, 2026-06-30T12:00:00Z or 2026-06-30T14:00:00+02:00), not "${text}"`,
    );
  return at;
}
