import { createHash } from "node:crypto";
import { parse } from "csv-parse/sync";
import type { EventColumnNames } from "../config/env.js";
import { BadRequestError } from "../errors.js";
import { recogniseColumns, type ColumnIndex } from "./columns.js";
import { eventKind, type PlatformEvent } from "./events.js";

/**
 * The Security Event report (a file, an upload, an object of the daily S3 export) read into events:
 * RFC 4180, a UTF-8 byte-order mark allowed, rows in any order, columns by header (columns.ts). A
 * file without the columns it needs is refused whole (`UnrecognisedReportError`); a row that does
 * not read is named by its line and left out, and the rest are read.
 */

/** The report holds at most 10,000 rows; a day of the export may hold more. Beyond this, refused. */
export const MAX_REPORT_BYTES = 20 * 1024 * 1024;

/** An event as read, with what identifies it across reports and the line it came from. */
type ReadEvent = PlatformEvent & { fingerprint: string; line: number };
type SkippedLine = { line: number; reason: string };
export type ReadReport = { rows: number; events: ReadEvent[]; skipped: SkippedLine[] };

/** A file that is not the report this connector can read: nothing of it is imported. */
export class UnrecognisedReportError extends BadRequestError {
  constructor(
    message: string,
    readonly found: string[],
    readonly lookedFor: string,
  ) {
    super(message);
  }
}

export function readSecurityEvents(text: string, names: EventColumnNames = {}): ReadReport {
  if (Buffer.byteLength(text, "utf8") > MAX_REPORT_BYTES)
    throw new BadRequestError(
      `The file is larger than ${MAX_REPORT_BYTES / 1024 / 1024} MB; the platform's report holds at most 10,000 events`,
    );
  let unclosed = false;
  const records = parse(text, {
    bom: true,
    info: true,
    relax_column_count: true,
    relax_quotes: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    // Only a quote never closed is left (relax_quotes takes the rest): it runs to the end.
    on_skip: () => void (unclosed = true),
  }) as unknown as { record: string[]; info: { lines: number } }[];
  // csv-parse counts the line where a record ends, and a CRLF inside a quoted field as two lines.
  let doubled = 0;
  let lastLine = 0;
  const [header, ...rows] = records.map(({ record, info }) => {
    doubled += record.reduce((n, field) => n + (field.match(/\r\n/g)?.length ?? 0), 0);
    lastLine = info.lines - doubled;
    const inside = record.reduce((n, field) => n + (field.match(/\r\n|\r|\n/g)?.length ?? 0), 0);
    return { record, line: lastLine - inside };
  });
  const skipped: SkippedLine[] = [];
  if (unclosed)
    skipped.push({
      line: lastLine + 1,
      reason: `a quoted field opened here is never closed; the rest of the file was not read`,
    });
  if (!header) throw new UnrecognisedReportError("The file is empty: no header row, no events", [], "");
  const recognised = recogniseColumns(header.record, names);
  if (!recognised.ok)
    throw new UnrecognisedReportError(
      `This file is not a Security Event report this connector can read (${recognised.problem}). Headers found: ${listHeaders(recognised.found)}. Looked for ${recognised.lookedFor}. Set SECURITY_EVENTS_COLUMNS (e.g. time=Date,event=Action,actor=Who,account=Target) if the platform's layout differs. Nothing was imported.`,
      recognised.found,
      recognised.lookedFor,
    );
  const events: ReadEvent[] = [];
  for (const { record, line } of rows) {
    const event = readRow(record, header.record.length, recognised.columns);
    if (typeof event === "string") skipped.push({ line, reason: event });
    else events.push({ ...event, line });
  }
  skipped.sort((a, b) => a.line - b.line);
  return { rows: rows.length + (unclosed ? 1 : 0), events, skipped };
}

function listHeaders(found: string[]): string {
  if (!found.length) return "none";
  const shown = found.slice(0, 30).map((h) => JSON.stringify(h.length > 60 ? `${h.slice(0, 60)}…` : h));
  return `${shown.join(", ")}${found.length > 30 ? `, and ${found.length - 30} more` : ""}`;
}

/** One row as an event, or why it cannot be one. */
function readRow(record: string[], width: number, columns: ColumnIndex): Omit<ReadEvent, "line"> | string {
  if (record.length !== width) return `has ${record.length} field(s); the header has ${width}`;
  const cell = (index: number | undefined) => (index === undefined ? "" : (record[index] ?? "").trim());
  const rawTime = cell(columns.time);
  const at = parseEventTime(rawTime);
  if (!at) return rawTime ? `the time ${JSON.stringify(rawTime.slice(0, 40))} is not a time` : "no time";
  const name = cell(columns.event).replace(/\s+/g, " ");
  if (!name) return "no event";
  const actor = cell(columns.actor);
  const account = cell(columns.account).toLowerCase() || null;
  const ip = cell(columns.ip) || null;
  const details = cell(columns.details) || null;
  const event: PlatformEvent = { at, actor, event: name, kind: eventKind(name), account, ip, details };
  return { ...event, fingerprint: eventFingerprint(event) };
}

/**
 * What makes two rows the same event, whichever report they came from (the manual download, the
 * export, overlapping downloads): sha256 over the normalised fields.
 */
export function eventFingerprint(e: Pick<PlatformEvent, "at" | "actor" | "event" | "account" | "ip" | "details">) {
  const fields = [
    e.at.toISOString(),
    e.actor.toLowerCase(),
    e.event.toLowerCase(),
    e.account ?? "",
    e.ip ?? "",
    e.details ?? "",
  ];
  return createHash("sha256").update(JSON.stringify(fields)).digest("hex");
}

const TIME =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?\s*(Z|UTC|GMT|[+-]\d{2}:?\d{2})?$/i;

/**
 * A report's time: ISO 8601 with Z or an offset, or `YYYY-MM-DD HH:MM[:SS[.fff]]` followed by
 * nothing, ` UTC`, ` GMT` or `Z`. A time without a zone is read as UTC (the platform's report is
 * in UTC). Undefined for anything else, or a date that does not exist (2026-02-30).
 */
export function parseEventTime(raw: string): Date | undefined {
  const m = TIME.exec(raw.trim());
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map((v) => Number(v ?? 0)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const ms = m[7] ? Number(m[7].slice(0, 3).padEnd(3, "0")) : 0;
  const local = Date.UTC(y, mo - 1, d, h, mi, s, ms);
  const check = new Date(local);
  if (
    check.getUTCFullYear() !== y ||
    check.getUTCMonth() !== mo - 1 ||
    check.getUTCDate() !== d ||
    check.getUTCHours() !== h ||
    check.getUTCMinutes() !== mi ||
    check.getUTCSeconds() !== s
  )
    return undefined;
  const zone = (m[8] ?? "Z").toUpperCase();
  if (zone === "Z" || zone === "UTC" || zone === "GMT") return check;
  const offset = /^([+-])(\d{2}):?(\d{2})$/.exec(zone)!;
  const minutes = Number(offset[2]) * 60 + Number(offset[3]);
  if (Number(offset[2]) > 23 || Number(offset[3]) > 59) return undefined;
  return new Date(local - (offset[1] === "-" ? -1 : 1) * minutes * 60_000);
}
