import pg from "pg";
import { describe, expect, it } from "vitest";
import { parseTimestamptz } from "../../src/db/timestamps.js";

/** src/db/timestamps.ts: the fast timestamptz parser gives what pg's own parser gives, for every text. */

const pgParser = pg.types.getTypeParser(1184, "text") as (text: string) => unknown;

/** What a parser made of the text, comparable with toEqual (a Date's time, or pg's other answers). */
const timeOf = (value: unknown) => (value instanceof Date ? value.getTime() : value);

describe("parseTimestamptz", () => {
  it.each([
    "2026-11-26 03:39:35.473812+00",
    "2026-11-26 03:39:35+00",
    "2026-11-26 03:39:35.4+00",
    "2026-11-26 03:39:35.47+00",
    "2026-11-26 03:39:35.999999+00",
    "2026-11-26 03:39:35.000001+00",
    "1000-01-01 00:00:00+00",
    "9999-12-31 23:59:59.999999+00",
    "2024-02-29 12:00:00.5+00",
    // Other zones, eras and shapes: pg's parser answers.
    "2026-11-26 04:39:35.473812+01",
    "2026-11-26 09:09:35.473812+05:30",
    "2026-11-25 19:39:35.473812-08",
    "2026-11-26 03:39:35.473812+00:00:00",
    "0999-12-31 23:59:59+00",
    "0099-06-01 00:00:00+00",
    "0001-01-01 00:00:00+00 BC",
    "10000-01-01 00:00:00+00",
    "infinity",
    "-infinity",
    "2026-11-26T03:39:35+00",
  ])("%s", (text) => expect(timeOf(parseTimestamptz(text))).toEqual(timeOf(pgParser(text))));

  it("agrees with pg's parser on 20,000 random UTC timestamps with 0 to 6 fraction digits", () => {
    let seed = 16;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 20_000; i++) {
      const date = new Date(
        Date.UTC(1000, 0, 1) + Math.floor(random() * (Date.UTC(9999, 11, 31) - Date.UTC(1000, 0, 1))),
      );
      const digits = Math.floor(random() * 7);
      const fraction = digits
        ? `.${String(Math.floor(random() * 1e6))
            .padStart(6, "0")
            .slice(0, digits)}`
        : "";
      const text = `${date.toISOString().slice(0, 19).replace("T", " ")}${fraction}+00`;
      expect(timeOf(parseTimestamptz(text)), text).toBe(timeOf(pgParser(text)));
    }
  });
});
