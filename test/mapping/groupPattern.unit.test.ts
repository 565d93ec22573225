import { describe, expect, it } from "vitest";
import { backtrackingHazard, compileGroupPattern } from "../../src/mapping/groupPattern.js";
import { MappingError } from "../../src/mapping/problems.js";

/** The shapes src/mapping/groupPattern.ts refuses, and what it lets through (issue 45, security 1). */
describe("groupPattern backtracking hazards", () => {
  it.each([
    "^Analysts-",
    "^(Sales|Marketing)-EU$",
    "^team-[a-z]+-admins$",
    "(?:EU|US)?-ops",
    "(\\d{3})+",
    "a{2,}b",
    "[(]+x",
    "\\(a+\\)+",
    "^(?!test-).*-admins$",
  ])("%s loads", (pattern) => {
    expect(backtrackingHazard(pattern)).toBeUndefined();
  });

  it.each([
    ["^(.*){11}#$", /repeated group repeats inside/],
    ["(a+)+$", /repeated group repeats inside/],
    ["^(\\w+\\s?)*$", /repeated group repeats inside/],
    ["((a*)b)*", /repeated group repeats inside/],
    ["(a{1,2}){3}", /repeated group repeats inside/],
    ["(?:a+)*?x", /repeated group repeats inside/],
    ["(a|ab)*c", /holds alternatives/],
    ["((x|y)z)+", /holds alternatives/],
    ["(a)\\1", /backreferences/],
    ["(?<n>a)\\k<n>", /backreferences/],
  ])("%s is refused", (pattern, reason) => {
    expect(backtrackingHazard(pattern)).toMatch(reason);
  });

  it("a pattern that loads is case-insensitive and answers from its cache", () => {
    const pattern = compileGroupPattern("^analysts-", { source: "m.yaml", line: 3, column: 5, message: "" });
    expect(pattern.test("Analysts-EU")).toBe(true);
    expect(pattern.test("Analysts-EU")).toBe(true);
    expect(pattern.test("Sales")).toBe(false);
  });

  it("a pattern that runs out of time is refused from then on, naming it and its line", () => {
    const pattern = compileGroupPattern(`^${".*".repeat(9)}#$`, { source: "m.yaml", line: 3, column: 5, message: "" });
    const started = performance.now();
    expect(() => pattern.test("x".repeat(60))).toThrow(MappingError);
    expect(performance.now() - started).toBeLessThan(2_000);
    // On a loaded machine the first call may be "short of CPU: try again" rather than refused; a
    // second call is refused either way (slow, or starved twice), and from then on every name is.
    expect(() => pattern.test("x".repeat(60))).toThrow(MappingError);
    expect(() => pattern.test("short")).toThrow(/m\.yaml:3:5: groupPattern '\^(\.\*){9}#\$' took longer than/);
  });
});
