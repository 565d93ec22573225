import pg from "pg";

/**
 * pg's parser for `timestamptz` (postgres-date) runs three regular expressions per value; every
 * SCIM read parses two per resource (issue 16). A session in UTC sends the one shape
 * `YYYY-MM-DD HH:MM:SS[.ffffff]+00`, which is read here from its digits with postgres-date's own
 * arithmetic (the same Date to the millisecond); anything else (another zone, BC, infinity, a
 * year below 1000) goes to pg's parser.
 */

const TIMESTAMPTZ = 1184;
const pgTimestamptz = pg.types.getTypeParser(TIMESTAMPTZ, "text") as (text: string) => unknown;

const digit = (text: string, at: number) => text.charCodeAt(at) - 48;
const twoDigits = (text: string, at: number) => digit(text, at) * 10 + digit(text, at + 1);

/** True when every character at the positions named is an ASCII digit. */
function digitsAt(text: string, positions: readonly number[]): boolean {
  for (const at of positions) {
    const d = digit(text, at);
    if (d < 0 || d > 9) return false;
  }
  return true;
}

const FIXED_DIGITS = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18] as const;
const FIXED_SEPARATORS: readonly [number, string][] = [
  [4, "-"],
  [7, "-"],
  [10, " "],
  [13, ":"],
  [16, ":"],
];

function isUtcTimestamp(text: string): boolean {
  const n = text.length;
  if (n < 22 || n > 29 || n === 23 || !text.endsWith("+00") || digit(text, 0) === 0) return false;
  for (const [at, c] of FIXED_SEPARATORS) if (text[at] !== c) return false;
  if (!digitsAt(text, FIXED_DIGITS)) return false;
  if (n === 22) return true;
  if (text[19] !== ".") return false;
  for (let at = 20; at < n - 3; at++) if (!digitsAt(text, [at])) return false;
  return true;
}

/** A `timestamptz` in pg's text format as pg's own parser reads it, without its regular expressions for UTC. */
export function parseTimestamptz(text: string): unknown {
  if (!isUtcTimestamp(text)) return pgTimestamptz(text);
  const year = digit(text, 0) * 1000 + digit(text, 1) * 100 + twoDigits(text, 2);
  // postgres-date's arithmetic, so that the millisecond is cut the same way.
  const ms = text.length > 22 ? 1000 * parseFloat(text.slice(19, -3)) : 0;
  return new Date(
    Date.UTC(
      year,
      twoDigits(text, 5) - 1,
      twoDigits(text, 8),
      twoDigits(text, 11),
      twoDigits(text, 14),
      twoDigits(text, 17),
      ms,
    ),
  );
}

/** The type parsers every pooled connection uses: pg's own, with `timestamptz` read by parseTimestamptz. */
export const pgTypes = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === TIMESTAMPTZ && format !== "binary") return parseTimestamptz;
    return pg.types.getTypeParser(oid, format as "text");
  },
};
