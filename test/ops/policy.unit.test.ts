import { describe, expect, it } from "vitest";
import { can } from "../../src/policy.js";

describe("who may resume a quarantined family", () => {
  it.each([
    ["admin", true],
    ["viewer", false],
    [undefined, false],
  ] as const)("%s → %s", (role, allowed) => {
    expect(can(role, "resume")).toBe(allowed);
  });
});
