import { describe, expect, it } from "vitest";
import type { DesiredDashboardUser } from "../../src/mapping/types.js";
import { diffDashboardUsers, isReduction } from "../../src/reconcile/diff.js";
import {
  isReductionPlan,
  planReconcile,
  priorityOf,
  PRIORITY,
  strippedUser,
  type AccountState,
  type Policies,
} from "../../src/reconcile/planner.js";

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
const now = new Date("2026-11-24T12:00:00Z");
const HOUR = 3_600_000;

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
      const plan = planReconcile(c.desired, c.account, policies, { now });
      expect(plan.action).toBe(c.action);
      expect(priorityOf(plan)).toBe(c.priority);
    });
  }

  it("with onEmailChange=recreate an email change deletes and creates in one plan", () => {
    const plan = planReconcile(
      { ...alice, userName: "new@example.com" },
      active(alice),
      { onEmailChange: "recreate" },
      { now },
    );
    expect(plan.action).toBe("recreate");
    expect(priorityOf(plan)).toBe(PRIORITY.deprovision);
  });

  it("a held email change applies the rest of the change under the current userName", () => {
    const plan = planReconcile({ ...withFewer, userName: "new@example.com" }, active(alice), policies, { now });
    expect(plan).toMatchObject({
      action: "email-change",
      interim: { desired: { ...withFewer, userName: alice.userName }, reduction: true },
    });
    expect(priorityOf(plan)).toBe(PRIORITY.reduction);
    expect(isReductionPlan(plan)).toBe(true);
  });
});

describe("planReconcile: strip now, delete later", () => {
  const grace = { onEmailChange: "hold" as const, deprovisionGraceMs: HOUR };
  const stripped = (deleteAfter: Date | null, createdByConnector = true): AccountState => ({
    ...active(strippedUser(active(alice))),
    strippedAt: now,
    deleteAfter,
    createdByConnector,
  });
  it.each<{
    name: string;
    desired: DesiredDashboardUser | null;
    account: AccountState;
    policies: Policies;
    idpDeleted?: boolean;
    expected: Record<string, unknown>;
  }>([
    {
      name: "grace 0 keeps the immediate delete",
      desired: null,
      account: active(alice),
      policies,
      expected: { action: "deprovision", reason: "no-grace" },
    },
    {
      name: "no access left: strip now, delete after the grace",
      desired: null,
      account: active(alice),
      policies: grace,
      expected: {
        action: "strip",
        deleteAfter: new Date(now.getTime() + HOUR),
        stripped: { userName: alice.userName, companyPermissions: [], workspaces: [] },
      },
    },
    {
      name: "deleted in the IdP: delete at once",
      desired: null,
      account: active(alice),
      policies: grace,
      idpDeleted: true,
      expected: { action: "deprovision", reason: "idp-deleted" },
    },
    {
      name: "stripped, within the grace: wait",
      desired: null,
      account: stripped(new Date(now.getTime() + 1)),
      policies: grace,
      expected: { action: "await-delete" },
    },
    {
      name: "stripped, grace ended: delete",
      desired: null,
      account: stripped(now),
      policies: grace,
      expected: { action: "deprovision", reason: "grace-ended" },
    },
    {
      name: "stripped, access granted again: one PUT on the same account",
      desired: alice,
      account: stripped(new Date(now.getTime() + 1)),
      policies: grace,
      expected: { action: "update", platformId: "p1", reduction: false },
    },
    {
      name: "stripped, access put back on the platform (drift): strip again, the delete at the same time",
      desired: null,
      account: { ...stripped(new Date(now.getTime() + 1)), lastApplied: alice },
      policies: grace,
      expected: { action: "strip", deleteAfter: new Date(now.getTime() + 1), stripped: { companyPermissions: [] } },
    },
    {
      name: "stripped, access put back on the platform (drift), grace ended: delete",
      desired: null,
      account: { ...stripped(now), lastApplied: alice },
      policies: grace,
      expected: { action: "deprovision", reason: "grace-ended" },
    },
    {
      name: "adopted and stripped, access put back on the platform (drift): strip again, never deleted",
      desired: null,
      account: { ...stripped(null, false), lastApplied: alice },
      policies: { ...grace, onAdoptedDeprovision: "strip" },
      expected: { action: "strip", deleteAfter: null },
    },
    {
      name: "adopted, strip policy: stripped and never deleted",
      desired: null,
      account: { ...active(alice), createdByConnector: false },
      policies: { ...grace, onAdoptedDeprovision: "strip" },
      expected: { action: "strip", deleteAfter: null, forget: false },
    },
    {
      name: "adopted and stripped: nothing more",
      desired: null,
      account: stripped(null, false),
      policies: { ...grace, onAdoptedDeprovision: "strip" },
      expected: { action: "none" },
    },
    {
      name: "adopted, delete policy: like the connector's own",
      desired: null,
      account: { ...active(alice), createdByConnector: false },
      policies: { ...grace, onAdoptedDeprovision: "delete" },
      expected: { action: "strip", deleteAfter: new Date(now.getTime() + HOUR) },
    },
  ])("$name", ({ desired, account, policies: p, idpDeleted, expected }) => {
    expect(planReconcile(desired, account, p, { now, ...(idpDeleted ? { idpDeleted } : {}) })).toMatchObject(expected);
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
