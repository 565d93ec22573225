import { describe, expect, it } from "vitest";
import type { DesiredDashboardUser } from "../../src/mapping/types.js";
import { diffDashboardUsers, isReduction } from "../../src/reconcile/diff.js";
import { planReconcile, priorityOf, PRIORITY, type AccountState } from "../../src/reconcile/planner.js";

const alice: DesiredDashboardUser = {
  userName: "alice@example.com",
  givenName: "Alice",
  familyName: "Smith",
  department: "engineering",
  companyPermissions: [],
  workspaces: [
    {
      appGroupName: "EU Production",
      appGroupPermissions: ["basic_access", "export_user_data"],
      appGroupPermissionSets: [],
      team: [],
    },
  ],
};
const withFewer: DesiredDashboardUser = {
  ...alice,
  workspaces: [{ ...alice.workspaces[0]!, appGroupPermissions: ["basic_access"] }],
};
const withMore: DesiredDashboardUser = { ...alice, companyPermissions: ["admin"] };
const active = (lastApplied: DesiredDashboardUser | null, userName = "alice@example.com"): AccountState => ({
  userName,
  platformId: "p1",
  state: "active",
  lastApplied,
});
const policies = { onEmailChange: "hold" as const };

describe("planReconcile", () => {
  const cases: {
    name: string;
    desired: DesiredDashboardUser | null;
    account?: AccountState;
    action: string;
    priority: number | null;
  }[] = [
    { name: "not entitled, no account: nothing", desired: null, action: "none", priority: null },
    { name: "entitled, no account: create", desired: alice, action: "create", priority: PRIORITY.create },
    {
      name: "same as last applied: nothing (0 calls)",
      desired: alice,
      account: active(alice),
      action: "none",
      priority: null,
    },
    {
      name: "lost every mapped group: deprovision first",
      desired: null,
      account: active(alice),
      action: "deprovision",
      priority: PRIORITY.deprovision,
    },
    {
      name: "a permission removed: reduction",
      desired: withFewer,
      account: active(alice),
      action: "update",
      priority: PRIORITY.reduction,
    },
    {
      name: "a permission added: ordinary update",
      desired: withMore,
      account: active(alice),
      action: "update",
      priority: PRIORITY.update,
    },
    {
      name: "userName changed: needs an admin",
      desired: { ...alice, userName: "alice.new@example.com" },
      account: active(alice),
      action: "email-change",
      priority: null,
    },
    {
      name: "create answer lost: resolve by lookup",
      desired: alice,
      account: { userName: alice.userName, platformId: null, state: "creating", lastApplied: null },
      action: "resolve-create",
      priority: PRIORITY.create,
    },
    {
      name: "create answer lost and no longer wanted: resolve as removal",
      desired: null,
      account: { userName: alice.userName, platformId: null, state: "creating", lastApplied: null },
      action: "resolve-create",
      priority: PRIORITY.deprovision,
    },
    {
      name: "userName compared case-insensitively",
      desired: alice,
      account: active(alice, "ALICE@example.com"),
      action: "none",
      priority: null,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const plan = planReconcile(c.desired, c.account, policies);
      expect(plan.action).toBe(c.action);
      expect(priorityOf(plan)).toBe(c.priority);
    });
  }

  it("with onEmailChange=recreate an email change deletes first (the next reconcile creates)", () => {
    expect(
      planReconcile({ ...alice, userName: "new@example.com" }, active(alice), { onEmailChange: "recreate" }).action,
    ).toBe("deprovision");
  });
});

describe("diffDashboardUsers", () => {
  it("reports single permissions added and removed, per workspace and team", () => {
    const before: DesiredDashboardUser = {
      ...alice,
      workspaces: [
        {
          appGroupName: "EU",
          appGroupPermissions: ["a", "b"],
          appGroupPermissionSets: [],
          team: [{ teamName: "T", teamPermissions: ["x"] }],
        },
      ],
    };
    const after: DesiredDashboardUser = {
      ...alice,
      department: "finance",
      workspaces: [
        { appGroupName: "EU", appGroupPermissions: ["b", "c"], appGroupPermissionSets: ["Read only"], team: [] },
      ],
    };
    expect(diffDashboardUsers(before, after)).toEqual([
      { kind: "set", path: "department", old: "engineering", new: "finance" },
      { kind: "permissions", path: "workspaces[EU].permissions", added: ["c"], removed: ["a"] },
      { kind: "permissions", path: "workspaces[EU].permissionSets", added: ["Read only"], removed: [] },
      { kind: "permissions", path: "workspaces[EU].teams[T].permissions", added: [], removed: ["x"] },
    ]);
  });

  it("an account appearing or going is a change, and going is a reduction", () => {
    const gone = diffDashboardUsers(alice, null);
    expect(gone[0]).toEqual({ kind: "account", old: "present", new: "absent" });
    expect(isReduction(gone)).toBe(true);
    expect(isReduction(diffDashboardUsers(null, alice))).toBe(false);
  });

  it("equal users have no difference", () => {
    expect(diffDashboardUsers(alice, structuredClone(alice))).toEqual([]);
  });
});
