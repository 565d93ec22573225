import { describe, expect, it } from "vitest";
import { csvCell } from "../../src/review/csv.js";

/** The exports' cells: always quoted, and no formula a spreadsheet would run, whatever its list separator. */
describe("csvCell", () => {
  it.each([
    [null, '""'],
    [undefined, '""'],
    ["", '""'],
    ["plain", '"plain"'],
    [42, '"42"'],
    ['say "hi"', '"say ""hi"""'],
    ["a,b", '"a,b"'],
    ["line\r\nbreak", '"line\r\nbreak"'],
    ["=1+1", '"\'=1+1"'],
    ["+1", '"\'+1"'],
    ["-1", '"\'-1"'],
    ["@SUM(A1)", '"\'@SUM(A1)"'],
    ["\tx", '"\'\tx"'],
    // After any separator a spreadsheet may split on: ; (European locales), , | tab, a line break.
    ["Mktg;=1+1;", '"Mktg;\'=1+1;"'],
    ["Mktg; =1+1", '"Mktg; \'=1+1"'],
    ["a,=b", '"a,\'=b"'],
    ["a|@b", '"a|\'@b"'],
    ["a\t+b", '"a\t\'+b"'],
    ["a\n-b", '"a\n\'-b"'],
    // A trigger inside a piece is data, not a formula start.
    ["2026-11-24T03:00:00.000Z", '"2026-11-24T03:00:00.000Z"'],
    ["a=b", '"a=b"'],
  ])("%j → %s", (value, cell) => {
    expect(csvCell(value)).toBe(cell);
  });
});
