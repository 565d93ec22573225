import { describe, expect, it } from "vitest";
import { diffValues } from "../../src/http/admin/ui/components/diff.js";

describe("permission diff", () => {
  it("lists added, removed and changed leaves; permission arrays compare as sets", () => {
    const rows = diffValues(
      { department: "Sales", company: ["read"], workspaces: { A: ["read", "write"] } },
      { department: "Ops", company: ["read"], workspaces: { A: ["read"], B: ["read"] } },
    );
    expect(rows.filter((r) => r.kind !== "same")).toEqual([
      { path: "department", kind: "changed", before: '"Sales"', after: '"Ops"' },
      { path: "workspaces.A[write]", kind: "removed", before: "✓" },
      { path: "workspaces.B[read]", kind: "added", after: "✓" },
    ]);
  });
});
