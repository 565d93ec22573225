import { EVENT_COLUMN_FIELDS, type EventColumnField, type EventColumnNames } from "../config/env.js";

/**
 * Which column of the Security Event report holds which field. The platform does not publish the
 * report's layout (docs/platform-record.md), so columns are recognised by their header's name
 * (trimmed, case and runs of spaces ignored) among the usual synonyms, and SECURITY_EVENTS_COLUMNS
 * names them where a layout differs. Pure.
 */

/** The names each field is recognised by, the preferred first: of two matching headers, the earlier name wins. */
const COLUMN_SYNONYMS: Readonly<Record<EventColumnField, readonly string[]>> = {
  time: [
    "time",
    "time (utc)",
    "timestamp",
    "timestamp (utc)",
    "date",
    "date (utc)",
    "date/time",
    "date time",
    "datetime",
    "event time",
    "occurred at",
    "created at",
  ],
  actor: ["actor", "user", "performed by", "actor email", "user email", "admin", "changed by", "developer"],
  event: ["event", "event type", "action", "activity", "type"],
  account: [
    "account",
    "affected account",
    "affected user",
    "target",
    "target user",
    "subject",
    "account email",
    "email",
    "developer email",
  ],
  ip: ["ip", "ip address", "source ip", "ip_address"],
  details: ["details", "description", "detail", "changes", "info"],
};

/** Each recognised field's column index (0-based). */
export type ColumnIndex = Partial<Record<EventColumnField, number>>;

export type ColumnRecognition =
  { ok: true; columns: ColumnIndex } | { ok: false; found: string[]; lookedFor: string; problem: string };

const normalise = (header: string) =>
  header
    .replace(/^\uFEFF/, "")
    .trim()
    .replace(/\s+/g, " ")
    .toLowerCase();

/**
 * The report's columns from its header row. A file is usable when it has a time, an event, and an
 * actor or an account; otherwise the answer names the headers found and those looked for.
 * A field SECURITY_EVENTS_COLUMNS names is looked for under that name only.
 */
export function recogniseColumns(headers: readonly string[], names: EventColumnNames = {}): ColumnRecognition {
  const normalised = headers.map(normalise);
  const columns: ColumnIndex = {};
  const taken = new Set<number>();
  const missingNamed: string[] = [];
  for (const field of EVENT_COLUMN_FIELDS) {
    const named = names[field];
    if (named === undefined) continue;
    const index = normalised.indexOf(normalise(named));
    if (index < 0) missingNamed.push(`${field}="${named}"`);
    else {
      columns[field] = index;
      taken.add(index);
    }
  }
  for (const field of EVENT_COLUMN_FIELDS) {
    if (names[field] !== undefined) continue;
    for (const synonym of COLUMN_SYNONYMS[field]) {
      const index = normalised.findIndex((h, i) => h === synonym && !taken.has(i));
      if (index >= 0) {
        columns[field] = index;
        taken.add(index);
        break;
      }
    }
  }
  const lacking = [
    columns.time === undefined ? "a time" : undefined,
    columns.event === undefined ? "an event" : undefined,
    columns.actor === undefined && columns.account === undefined ? "an actor or an account" : undefined,
  ].filter((x): x is string => x !== undefined);
  if (!lacking.length && !missingNamed.length) return { ok: true, columns };
  return {
    ok: false,
    found: headers.map((h) => h.replace(/^\uFEFF/, "").trim()),
    lookedFor: describeLookedFor(names),
    problem: missingNamed.length
      ? `SECURITY_EVENTS_COLUMNS names ${missingNamed.join(", ")}, which the file does not have`
      : `no column for ${lacking.join(", ")}`,
  };
}

/** What was looked for, in words: each field and the names it goes by. */
function describeLookedFor(names: EventColumnNames): string {
  const field = (f: EventColumnField) =>
    names[f] !== undefined ? `"${names[f]}" (SECURITY_EVENTS_COLUMNS)` : COLUMN_SYNONYMS[f].join(", ");
  return `time: ${field("time")}; event: ${field("event")}; actor: ${field("actor")}; account: ${field("account")}`;
}
