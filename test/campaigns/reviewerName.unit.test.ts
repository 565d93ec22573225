import { describe, expect, it } from "vitest";
import { canonicalReviewerName, reviewerNameProblem } from "../../src/review/campaigns/reviewerName.js";

/** Reviewer names compare after NFKC with ASCII-only case folding; names that read as another are refused. */
describe("reviewer names", () => {
  it.each([
    ["Kate@Example.COM", "kate@example.com"],
    ["kate@example.com", "kate@example.com"],
    // Decomposed é composes: the same name, however the IdP spelled it.
    ["jose\u0301@example.com", "jos\u00e9@example.com"],
    // Only ASCII letters fold: toLowerCase would make the dotted İ an i plus a combining dot.
    ["\u0130rem@example.com", "\u0130rem@example.com"],
    // Cyrillic in the local part, Latin in the domain: one script per part.
    ["\u0418\u0432\u0430\u043d@Example.ru", "\u0418\u0432\u0430\u043d@example.ru"],
  ])("%s compares as %s", (name, canonical) => {
    expect(reviewerNameProblem(name)).toBeUndefined();
    expect(canonicalReviewerName(name)).toBe(canonical);
  });

  it("the Kelvin sign is refused, not compared: toLowerCase and NFKC both make it a k", () => {
    expect("\u212Aate@example.com".toLowerCase()).toBe("kate@example.com");
    expect(canonicalReviewerName("\u212Aate@example.com")).toBe("kate@example.com");
    expect(reviewerNameProblem("\u212Aate@example.com")).toMatch(/Kelvin sign/);
  });

  it.each([
    ["the Kelvin sign", "\u212Aate@example.com", /normalise to other letters/],
    ["fullwidth letters", "\uff4b\uff41\uff54\uff45@example.com", /normalise to other letters/],
    ["a ligature", "\ufb01n@example.com", /normalise to other letters/],
    ["Latin with a Cyrillic \u0430", "k\u0430te@example.com", /mixes scripts \(Latin, Cyrillic\)/],
    ["Latin with a Greek \u03bf", "b\u03bfb@example.com", /mixes scripts \(Latin, Greek\)/],
    ["Cyrillic with Latin", "\u0438van@example.ru", /mixes scripts/],
    ["a Cyrillic \u0430 in the domain", "kate@ex\u0430mple.com", /mixes scripts \(Latin, Cyrillic\) in "ex\u0430mple"/],
  ])("refuses %s", (_what, name, why) => {
    expect(reviewerNameProblem(name)).toMatch(why);
  });

  it.each([
    ["Japanese with Latin", "\u5c71\u7530\u305f\u308d\u3046.yamada@example.jp"],
    ["Korean with Latin", "\ud64d\uae38\ub3d9.hong@example.kr"],
    ["digits, dots, @ and a hyphen", "a-1.b_2@example.com"],
  ])("accepts %s (UTS #39's highly restrictive mixes)", (_what, name) => {
    expect(reviewerNameProblem(name)).toBeUndefined();
  });
});
