import canonicalize from "canonicalize";
import { describe, expect, it } from "vitest";
import { canonicalRow } from "../../src/db/auditChain.js";

/**
 * The audit chains hash canonicalize's bytes (src/db/auditChain.ts), so a change of its version must
 * not change one byte: a chain written before would stop verifying. The answers are RFC 8785's own
 * (sections 3.2.2 and 3.2.3, appendix B), written here by hand rather than taken from a run.
 */

describe("canonicalize (RFC 8785) for the audit chains", () => {
  it("writes RFC 8785's example of primitives, escapes and numbers", () => {
    const input = JSON.parse(
      '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],' +
        ' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/", "literals": [null, true, false]}',
    ) as unknown;
    expect(canonicalize(input)).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],' +
        '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it("sorts keys by UTF-16 code unit, as RFC 8785's sorting example", () => {
    const input = {
      "\u20ac": "Euro Sign",
      "\r": "Carriage Return",
      "\ufb33": "Hebrew Letter Dalet With Dagesh",
      "1": "One",
      "\ud83d\ude00": "Emoji: Grinning Face",
      "\u0080": "Control",
      "\u00f6": "Latin Small Letter O With Diaeresis",
    };
    expect(canonicalize(input)).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis",' +
        '"\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
  });

  it.each([
    [0, "0"],
    [-0, "0"],
    [5e-324, "5e-324"],
    [-5e-324, "-5e-324"],
    [1.7976931348623157e308, "1.7976931348623157e+308"],
    [9007199254740992, "9007199254740992"],
    [-9007199254740992, "-9007199254740992"],
    [295147905179352830000, "295147905179352830000"],
    [9.999999999999997e22, "9.999999999999997e+22"],
    [1e23, "1e+23"],
    [999999999999999700000, "999999999999999700000"],
    [999999999999999900000, "999999999999999900000"],
    [1e21, "1e+21"],
    [9.999999999999997e-7, "9.999999999999997e-7"],
    [0.000001, "0.000001"],
    [333333333.3333332, "333333333.3333332"],
    [333333333.33333325, "333333333.33333325"],
    [333333333.33333343, "333333333.33333343"],
    [-0.0000033333333333333333, "-0.0000033333333333333333"],
    [1424953923781206.2, "1424953923781206.2"],
  ])("writes the number %s as %s (RFC 8785, appendix B)", (value, expected) => {
    expect(canonicalize(value)).toBe(expected);
  });

  it("writes a chained row with nested JSON, unicode and numbers, null columns left out at the top only", () => {
    expect(
      canonicalRow({
        id: "12",
        chain_hash: "ff",
        user_name: "zoë@example.com",
        at: new Date("2026-12-01T00:00:00.000Z"),
        detail: {
          z: [1e21, -0, 1.5, { b: null, a: "\u2028\u0007" }],
          a: { é: true, e: false, "\ud83d\ude00": "😀" },
        },
        error: null,
      }),
    ).toBe(
      '{"at":"2026-12-01T00:00:00.000Z",' +
        '"detail":{"a":{"e":false,"é":true,"😀":"😀"},"z":[1e+21,0,1.5,{"a":"\u2028\\u0007","b":null}]},' +
        '"user_name":"zoë@example.com"}',
    );
  });

  it("refuses what JSON cannot hold instead of writing it", () => {
    expect(() => canonicalize({ a: NaN })).toThrow();
    expect(() => canonicalize({ a: "\ud800" })).toThrow();
  });
});
