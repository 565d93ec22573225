import { describe, expect, it } from "vitest";
import { can, type AdminAction } from "../../src/policy.js";

describe("policy", () => {
  it.each<[AdminAction, boolean, boolean]>([
    ["read", true, true],
    ["approve", false, true],
    ["reconcile", false, true],
    ["resync", false, true],
    ["review", true, true],
    ["reviewAnyone", false, true],
    ["platformEvents", false, true],
    ["mapping", false, true],
  ])("%s: viewer %s, admin %s", (action, viewer, admin) => {
    expect(can("viewer", action)).toBe(viewer);
    expect(can("admin", action)).toBe(admin);
    expect(can(undefined, action)).toBe(false);
    expect(can("root", action)).toBe(false); // a role policy.ts does not know (a reviewer record's role) may do nothing
    expect(can("toString", action)).toBe(false);
  });
});
