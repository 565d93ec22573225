import { describe, expect, it } from "vitest";
import { parseMapping } from "../../src/mapping/file.js";
import { chartDays } from "../../src/admin/overview.js";
import { durationLabel, etaText, parseUtcTime, platformCallOf } from "../../src/admin/format.js";
import { triggerFacts, triggerLabel } from "../../src/vocabulary/reconcile.js";
import { logEntryTrees, permissionTree, treeAfterChanges } from "../../src/admin/mapping/permissionTree.js";
import { reconcileNowReport } from "../../src/admin/users/reconcileNow.js";
import { mappingChangeOf, ruleGrantsText, ruleGroupsText, ruleName } from "../../src/admin/mapping/rules.js";
import { userState } from "../../src/admin/users/users.js";
import { holdSummary } from "../../src/admin/approvals.js";
import { nextFiring, runStatus } from "../../src/admin/runs/runs.js";
import type { DesiredDashboardUser } from "../../src/mapping/types.js";
import { diffDashboardUsers } from "../../src/reconcile/diff.js";

const ann: DesiredDashboardUser = {
  userName: "ann@example.com",
  givenName: "Ann",
  familyName: "Test",
  department: "marketing",
  companyPermissions: [],
  workspaces: [
    {
      appGroupName: "EU Production",
      appGroupPermissions: ["basic_access", "send_campaigns_canvases"],
      appGroupPermissionSets: [],
      team: [{ teamName: "Lifecycle", teamPermissions: ["basic_access"] }],
    },
  ],
};
const annReduced: DesiredDashboardUser = {
  ...ann,
  companyPermissions: ["admin"],
  workspaces: [
    { appGroupName: "EU Production", appGroupPermissions: ["basic_access"], appGroupPermissionSets: [], team: [] },
  ],
};

describe("admin data: words for stored facts", () => {
  const group = { groupId: "953a8542-0c1e-4f3b-9d51-6a1f2b3c4d5e", groupName: "Marketing" };
  it.each([
    // Triggers recorded with their facts
    [
      { kind: "idp", method: "PATCH", resource: "Groups/953a8542", change: { what: "added-to-group", ...group } },
      "added to group Marketing",
    ],
    [
      { kind: "idp", method: "PATCH", resource: "Groups/953a8542", change: { what: "removed-from-group", ...group } },
      "removed from group Marketing",
    ],
    [
      { kind: "idp", method: "PUT", change: { what: "group-renamed", ...group, previousName: "Mktg" } },
      "group Mktg renamed to Marketing",
    ],
    [
      { kind: "idp", method: "PUT", change: { what: "group-renamed", ...group, previousName: "Marketing" } },
      "group Marketing changed in the IdP",
    ],
    [
      { kind: "idp", method: "DELETE", change: { what: "group-deleted", ...group } },
      "group Marketing deleted in the IdP",
    ],
    [{ kind: "idp", method: "POST", change: { what: "user-created" } }, "created by the IdP"],
    [{ kind: "idp", method: "PATCH", change: { what: "user-deactivated" } }, "deactivated in the IdP"],
    [{ kind: "idp", method: "PUT", change: { what: "user-reactivated" } }, "reactivated in the IdP"],
    [{ kind: "idp", method: "PATCH", change: { what: "user-updated" } }, "profile changed in the IdP"],
    [{ kind: "idp", method: "DELETE", change: { what: "user-deleted" } }, "deleted in the IdP"],
    [
      {
        kind: "idp",
        method: "PATCH",
        change: {
          what: "assignments-changed",
          assigned: [
            { attribute: "roles", value: "company-auditor", name: "Auditor" },
            { attribute: "entitlements", value: "eu-analyst", name: "EU analyst" },
            { attribute: "entitlements", value: "gold" },
          ],
          removed: [{ attribute: "entitlements", value: "marketer-fashion", name: "Marketer – Fashion Brands" }],
          unlisted: 2,
          assignedIn: "Okta",
        },
      },
      "role Auditor, entitlement EU analyst and entitlement gold assigned in Okta; entitlement Marketer – Fashion Brands removed in Okta; and 2 more",
    ],
    [
      {
        kind: "idp",
        change: { what: "assignments-changed", assigned: [], removed: [{ attribute: "roles", value: "x" }] },
      },
      "role x removed in the IdP",
    ],
    [
      { kind: "mapping", mappingHash: "0123456789abcdef", rules: [{ line: 34, name: "Analysts export data" }] },
      "mapping change: rule Analysts export data, line 34",
    ],
    [
      {
        kind: "mapping",
        rules: [
          { line: 3, name: "group Marketing" },
          { line: 9, name: "Old rule", removed: true },
        ],
      },
      "mapping change: rule group Marketing, line 3; removed rule Old rule, line 9",
    ],
    [
      {
        kind: "mapping",
        rules: [{ line: 3, name: "group Marketing" }],
        entries: [
          { id: "eu-analyst", line: 61, name: "EU analyst" },
          { id: "lifecycle-team", line: 55, name: "Lifecycle team", removed: true },
        ],
      },
      "mapping change: rule group Marketing, line 3; catalogue entry EU analyst, line 61; removed catalogue entry Lifecycle team, line 55",
    ],
    [{ kind: "resync", runId: "abcdef12-3456" }, "resync"],
    [{ kind: "admin", actor: "Ann Admin" }, "reconcile now by Ann Admin"],
    [{ kind: "admin", actor: "Ann Admin", via: "approval" }, "approved by Ann Admin"],
    [{ kind: "admin", actor: "Ann Admin", hold: "deprovision" }, "held deprovision decided by Ann Admin"],
    [{ kind: "admin", actor: "Ann Admin", runId: "r-1", via: "ui" }, "resync started by Ann Admin"],
    // Rows recorded before triggers carried their facts still read as words
    [
      { kind: "idp", method: "PATCH", resource: "Groups/953a8542-0c1e-4f3b-9d51-6a1f2b3c4d5e", requestId: "r-9" },
      "a group of theirs changed in the IdP",
    ],
    [
      { kind: "idp", method: "DELETE", resource: "Groups/953a8542-0c1e-4f3b-9d51-6a1f2b3c4d5e" },
      "a group of theirs was deleted in the IdP",
    ],
    [{ kind: "idp", method: "POST", resource: "Users/5dbe7d8c" }, "created by the IdP"],
    [{ kind: "idp", method: "PATCH", resource: "Users/5dbe7d8c" }, "changed in the IdP"],
    [{ kind: "idp", method: "DELETE", resource: "Users/5dbe7d8c" }, "deleted in the IdP"],
    [{ kind: "idp" }, "changed in the IdP"],
    [{ kind: "idp", change: { what: "something-new" }, method: "PUT", resource: "Users/x" }, "changed in the IdP"],
    [{ kind: "mapping", mappingHash: "0123456789abcdef" }, "mapping change"],
    [{ kind: "admin" }, "reconcile now by an admin"],
    [{}, "—"],
    [null, "—"],
  ])("trigger %j reads %s", (trigger, label) => {
    expect(triggerLabel(trigger)).toBe(label);
  });

  it("puts the ids behind the words on the entry's own page", () => {
    const trigger = {
      kind: "idp",
      method: "PATCH",
      resource: `Groups/${group.groupId}`,
      requestId: "r-9",
      change: { what: "added-to-group", ...group },
    };
    expect(triggerFacts(trigger)).toEqual([
      { label: "IdP group", value: `Marketing (${group.groupId})` },
      { label: "IdP request", value: `PATCH /scim/v2/Groups/${group.groupId}` },
      { label: "Request id", value: "r-9" },
    ]);
    expect(
      triggerFacts({
        kind: "mapping",
        mappingHash: "0123456789abcdef0123",
        rules: [{ line: 34, name: "Analysts export data" }],
      }),
    ).toEqual([
      { label: "Mapping version", value: "0123456789ab" },
      { label: "Rule", value: "Analysts export data (line 34)", page: "mapping" },
    ]);
    expect(
      triggerFacts({
        kind: "idp",
        change: {
          what: "assignments-changed",
          assigned: [{ attribute: "roles", value: "company-auditor", name: "Auditor" }],
          removed: [{ attribute: "entitlements", value: "gold" }],
          assignedIn: "Okta",
        },
      }),
    ).toEqual([
      { label: "Assigned role", value: "Auditor (company-auditor)" },
      { label: "Removed entitlement", value: "gold" },
    ]);
    expect(triggerFacts({ kind: "resync", runId: "run-1" })).toEqual([
      { label: "Resync run", value: "run-1", page: "runs" },
    ]);
    expect(triggerFacts(null)).toEqual([]);
  });

  it.each([
    ["create", 201, 1, "p-1", { method: "POST", path: "/scim/v2/Users", status: 201 }],
    ["update", 200, 1, "p-1", { method: "PUT", path: "/scim/v2/Users/p-1", status: 200 }],
    ["deprovision", 204, 1, null, { method: "DELETE", path: "/scim/v2/Users/{id}", status: 204 }],
    ["adopt", 200, 2, "p-1", { method: "GET", path: '/scim/v2/Users?filter=userName eq "a@x"', status: 200 }],
    ["hold", null, 0, "p-1", null],
    ["approve", null, 0, null, null],
  ] as const)("a %s with status %s names its request", (action, platformStatus, callsSpent, platformId, call) => {
    expect(platformCallOf({ action, platformStatus, callsSpent, userName: "a@x" }, platformId)).toEqual(call);
  });

  const now = new Date("2026-11-21T10:00:00Z");
  it.each([
    [null, undefined],
    [now, "all within today's budget"],
    [new Date("2026-11-23T00:00:00Z"), "about 2 days at the current budget (finishing after 2026-11-23 00:00 UTC)"],
  ])("ETA %s reads %s", (eta, text) => {
    expect(etaText(now, eta, (d) => `${d.toISOString().slice(0, 16).replace("T", " ")} UTC`)).toBe(text);
  });

  it.each([
    [{ calls: 0, queued: 5, remainingToday: 100, perDay: 4500 }, "no platform calls needed"],
    [{ calls: 40, queued: 0, remainingToday: 100, perDay: 4500 }, "fits in today's remaining budget (100 calls left)"],
    [
      { calls: 40, queued: 70, remainingToday: 100, perDay: 4500 },
      "about 0.1 days at the current pace (4,500 calls a day, behind 70 users already queued)",
    ],
    [
      { calls: 9000, queued: 0, remainingToday: 0, perDay: 4500 },
      "about 2 days at the current pace (4,500 calls a day)",
    ],
    [{ calls: 1, queued: 0, remainingToday: 0, perDay: 0 }, "cannot be estimated: the daily budget is all reserve"],
  ])("%j takes %s", (input, label) => {
    expect(durationLabel(input)).toBe(label);
  });

  it.each([
    ["2026-11-20T09:15", "2026-11-20T09:15:00.000Z"],
    ["2026-11-20", "2026-11-20T00:00:00.000Z"],
    ["2026-11-20T09:15:00+01:00", "2026-11-20T08:15:00.000Z"],
    ["", undefined],
  ])("time %s is %s", (value, iso) => {
    expect(parseUtcTime(value, "From")?.toISOString()).toBe(iso);
  });

  it("refuses a time that is not one", () => {
    expect(() => parseUtcTime("yesterday", "From")).toThrow(/From: not a date/);
  });

  it("fills the 14 chart days, oldest first", () => {
    const days = chartDays(now, [
      { day: "2026-11-21", action: "create", calls: 3 },
      { day: "2026-11-20", action: "update", calls: 2 },
    ]);
    expect(days).toHaveLength(14);
    expect(days[0]).toEqual({ day: "2026-11-08", byAction: {} });
    expect(days.slice(-2)).toEqual([
      { day: "2026-11-20", byAction: { update: 2 } },
      { day: "2026-11-21", byAction: { create: 3 } },
    ]);
    expect(chartDays(now, [])).toEqual([]);
  });

  it.each([
    [{ accountState: "active", queued: false, parked: false, hold: null }, "on the platform"],
    [{ accountState: null, queued: true, parked: false, hold: null }, "no platform account · queued"],
    [{ accountState: "creating", queued: false, parked: true, hold: null }, "parked (failed)"],
    [{ accountState: "active", queued: true, parked: false, hold: "deprovision" }, "deprovision held for approval"],
    [{ accountState: "active", queued: false, parked: false, hold: "email_change" }, "email change held for approval"],
  ] as const)("user %j is %s", (row, state) => {
    expect(userState(row)).toBe(state);
  });

  it("names a grant held by the settle window, until the window ends", () => {
    const row = { accountState: "active", queued: true, parked: false, hold: null } as const;
    const settleUntil = new Date("2026-11-21T12:00:10Z");
    expect(userState({ ...row, settleUntil }, new Date("2026-11-21T12:00:00Z"))).toBe(
      "on the platform · waiting to settle",
    );
    expect(userState({ ...row, settleUntil }, new Date("2026-11-21T12:00:10Z"))).toBe("on the platform · queued");
  });

  it("summarises holds", () => {
    expect(holdSummary({ kind: "email_change", detail: { from: "a@x", to: "b@x" } })).toContain("a@x → b@x");
    expect(holdSummary({ kind: "email_change", detail: { from: "b@x", to: "b@x" } }, "a@x")).toContain("a@x → b@x");
    expect(holdSummary({ kind: "deprovision", detail: {} })).toContain("mass-deprovision breaker");
  });

  it.each([
    [{ kind: "done" }, "succeeded"],
    [{ kind: "retry", error: "platform answered 503" }, "retrying"],
    [{ kind: "rate_limited", until: now }, "retrying"],
    [{ kind: "budget", resetsAt: now }, "deferred-for-budget"],
    [{ kind: "terminal", error: "platform answered 400" }, "failed"],
    ["busy", "retrying"],
  ] as const)("reconcile now ending %j is logged %s", (result, outcome) => {
    expect(reconcileNowReport(result, "ann@example.com").outcome).toBe(outcome);
  });
});

describe("admin data: runs", () => {
  it.each([
    [{ status: "running", phase: "plan", dryRun: false }, "running (re-deriving)"],
    [{ status: "running", phase: "verify", dryRun: false }, "running (verifying)"],
    [{ status: "succeeded", phase: "done", dryRun: true }, "succeeded · dry run"],
    [{ status: "failed", phase: "plan", dryRun: false }, "failed"],
  ] as const)("run %j reads %s", (run, text) => {
    expect(runStatus(run)).toBe(text);
  });

  it("knows when the schedule fires next", () => {
    expect(nextFiring("0 2 * * *", new Date("2026-11-21T10:00:00Z"))?.toISOString()).toBe("2026-11-22T02:00:00.000Z");
    expect(nextFiring("off", new Date())).toBeNull();
    expect(nextFiring("not cron", new Date())).toBeNull();
  });
});

describe("admin data: permission trees", () => {
  it("keys workspaces and teams by name", () => {
    expect(permissionTree(ann)).toEqual({
      userName: "ann@example.com",
      givenName: "Ann",
      familyName: "Test",
      department: "marketing",
      companyPermissions: [],
      workspaces: {
        "EU Production": {
          permissions: ["basic_access", "send_campaigns_canvases"],
          permissionSets: [],
          teams: { Lifecycle: ["basic_access"] },
        },
      },
    });
    expect(permissionTree(null)).toBeNull();
  });

  it("rebuilds what a failed decision was applying from its changes", () => {
    const changes = diffDashboardUsers(ann, annReduced);
    expect(treeAfterChanges(permissionTree(ann), changes)).toEqual(permissionTree(annReduced));
    expect(treeAfterChanges(permissionTree(ann), diffDashboardUsers(ann, null))).toBeNull();
    expect(treeAfterChanges(null, diffDashboardUsers(null, ann))).toEqual(permissionTree(ann));
  });

  it("shows a stored after as is, and no difference when nothing changed", () => {
    expect(logEntryTrees({ before: ann, after: annReduced, changes: [] })).toEqual({
      before: permissionTree(ann),
      after: permissionTree(annReduced),
    });
    expect(logEntryTrees({ before: null, after: null, changes: [] })).toEqual({ before: null, after: null });
    expect(logEntryTrees({ before: ann, after: null, changes: diffDashboardUsers(ann, null) }).after).toBeNull();
  });
});

describe("admin data: rules and mapping changes", () => {
  const mapping = parseMapping(
    `department: { default: engineering }
rules:
  - group: Platform Admins
    companyPermissions: [admin]
  - description: Analysts
    groups: [Data]
    groupPattern: "^Analysts-"
    department: data
    workspaces:
      - name: EU Production
        permissions: [export_user_data]
        teams: [{ name: Insights, permissions: [basic_access] }]
`,
    "m.yaml",
  );

  it.each([
    [0, "Rule 1 (line 3)", '"Platform Admins"', "company: admin"],
    [
      1,
      "Analysts (line 5)",
      '"Data" or pattern /^Analysts-/',
      "department data; EU Production: export_user_data; team EU Production/Insights: basic_access",
    ],
  ])("rule %i reads %s / %s / %s", (index, name, groups, grants) => {
    const rule = mapping.rules[index]!;
    expect([ruleName(rule), ruleGroupsText(rule), ruleGrantsText(rule)]).toEqual([name, groups, grants]);
  });

  it.each([
    ["no change", ann, ann, undefined],
    [
      "a reduction",
      ann,
      annReduced,
      {
        gains: ["company: admin"],
        losses: ["workspace EU Production: send_campaigns_canvases", "team EU Production/Lifecycle: basic_access"],
      },
    ],
    [
      "a new account",
      null,
      annReduced,
      { gains: ["dashboard account", "company: admin", "workspace EU Production: basic_access"], losses: [] },
    ],
    [
      "a removal",
      annReduced,
      null,
      { gains: [], losses: ["dashboard account", "company: admin", "workspace EU Production: basic_access"] },
    ],
    [
      "a department move",
      ann,
      { ...ann, department: "sales" },
      { gains: ["department: marketing → sales"], losses: [] },
    ],
  ])("%s", (_name, current, draft, expected) => {
    const change = mappingChangeOf("ann@example.com", current, draft);
    expect(change).toEqual(expected && { userName: "ann@example.com", ...expected });
  });
});
