import { describe, expect, it } from "vitest";
import { isoTime } from "../../src/scim/resources.js";

/** meta.created and meta.lastModified: isoTime writes what Date.prototype.toISOString writes. */

describe("isoTime", () => {
  it.each([
    "2026-11-26T03:39:35.473Z",
    "2026-01-02T03:04:05.006Z",
    "2026-12-31T23:59:59.999Z",
    "2026-06-15T10:20:30.040Z",
    "1000-01-01T00:00:00.000Z",
    "9999-12-31T23:59:59.999Z",
    "0999-12-31T23:59:59.999Z",
    "+010000-01-01T00:00:00.000Z",
    "-000001-01-01T00:00:00.000Z",
  ])("%s", (text) => expect(isoTime(new Date(text))).toBe(new Date(text).toISOString()));

  it("agrees with toISOString on 20,000 random times", () => {
    let seed = 16;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 20_000; i++) {
      // Half between the years 1000 and 9999 (written out), half anywhere a Date can be.
      const date = new Date(
        i % 2
          ? Date.UTC(1000, 0, 1) + Math.floor(random() * (Date.UTC(10000, 0, 1) - Date.UTC(1000, 0, 1)))
          : Math.floor((random() - 0.5) * 2 * 8.64e15),
      );
      expect(isoTime(date)).toBe(date.toISOString());
    }
  });

  it("throws as toISOString does for an invalid date", () => {
    expect(() => isoTime(new Date(Number.NaN))).toThrow(RangeError);
  });
});
