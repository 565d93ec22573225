import { describe, expect, it } from "vitest";
import { BadRequestError } from "../../src/errors.js";
import { parseFilter, parsePatchPath } from "../../src/scim/filter.js";

/**
 * Found by the SCIM fuzz test: a filter holding a Unicode space other than SP/TAB/CR/LF (U+FEFF,
 * U+00A0, U+3000) made the tokenizer push empty words forever and the process run out of heap.
 * Each must now be a prompt 400 invalidFilter (or a word that is part of a value).
 */
describe("filter tokenizer on Unicode spaces", () => {
  const SPACES = ["\ufeff", "\u00a0", "\u2028", "\u3000", "\u200b\u200d\ufeff", "\u1680", "\u2003"];
  for (const space of SPACES) {
    const name = [...space].map((c) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`).join(" ");
    it(`${name}: rejected at once, alone, inside a word and between tokens`, () => {
      for (const input of [
        space,
        `userName${space}eq "x"`,
        `userName eq${space}"x"`,
        `${space}userName eq "x"`,
        `emails[type eq "work"${space}]`,
      ]) {
        const started = Date.now();
        expect(() => parseFilter(input)).toThrow(BadRequestError);
        expect(() => parsePatchPath(input)).toThrow(BadRequestError);
        expect(Date.now() - started).toBeLessThan(100);
      }
    });
  }

  it("a Unicode space inside a quoted value is just part of the value", () => {
    expect(parseFilter('userName eq "a\u00a0b\ufeff"')).toEqual({
      kind: "compare",
      path: "userName",
      op: "eq",
      value: "a\u00a0b\ufeff",
    });
  });
});
