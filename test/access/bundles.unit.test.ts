import { describe, expect, it } from "vitest";
import { applyDenies, type DeniedGrant } from "../../src/mapping/denies.js";
import { parseMapping } from "../../src/mapping/file.js";
import { BASIC_ACCESS_GRANULAR } from "../../src/vocabulary/permissions.js";
import { bundleWords, explainGrants, reviewableGrants, reviewedByBundle } from "../../src/mapping/reasons.js";
import type { DesiredDashboardUser } from "../../src/mapping/types.js";
import { grantWords } from "../../src/reconcile/desiredSource.js";

/**
 * Reviews by bundle (issue 33, item 7), pure: a granular state's strings grouped per workspace or
 * team by the rule that gives them first; a legacy state's kept one per string.
 */

const mapping = parseMapping(
  `permissionModel: granular
department:
  default: engineering
rules:
  - group: Marketing
    description: EU marketers
    roles: [Marketer]
    workspaces:
      - name: EU
        permissions: [view_campaigns, edit_campaigns, launch_campaigns]
        teams:
          - name: Tier 1
            permissions: [view_campaigns, view_reports]
  - group: Support
    workspaces:
      - name: EU
        permissions: [view_campaigns, view_segments]
      - name: US
        permissionSets: [Analysts]
`,
  "mapping.yaml",
);
const groups = [{ displayName: "Marketing" }, { displayName: "Support" }];

const granular: DesiredDashboardUser = {
  userName: "a@example.com",
  givenName: "A",
  familyName: "B",
  department: "engineering",
  companyPermissions: [],
  roles: ["Marketer"],
  workspaces: [
    {
      appGroupName: "EU",
      // view_pii: held, but no rule gives it any more.
      appGroupPermissions: ["edit_campaigns", "launch_campaigns", "view_campaigns", "view_pii", "view_segments"],
      appGroupPermissionSets: [],
      team: [{ teamName: "Tier 1", teamPermissions: ["view_campaigns", "view_reports"] }],
    },
    { appGroupName: "US", appGroupPermissions: [], appGroupPermissionSets: ["Analysts"], team: [] },
  ],
  permissionModel: "granular",
};

const rows = (user: DesiredDashboardUser, by = groups) =>
  explainGrants(user, by, mapping, null).map((g) => [
    g.scope,
    g.workspace,
    g.team,
    g.permission,
    g.bundle ?? null,
    g.reasons.map((r) => ("rule" in r ? r.rule.line : r.source)),
  ]);

describe("explainGrants on a granular state", () => {
  it("gives one grant per rule and workspace (or team), the strings two rules give to the first, the rest to 'no rule'", () => {
    expect(rows(granular)).toEqual([
      ["role", null, null, "Marketer", null, [5]],
      ["workspace", "EU", null, "rule 'EU marketers'", ["edit_campaigns", "launch_campaigns", "view_campaigns"], [5]],
      ["workspace", "EU", null, "rule #2", ["view_segments"], [14]],
      ["workspace", "EU", null, "no rule", ["view_pii"], []],
      ["team", "EU", "Tier 1", "rule 'EU marketers'", ["view_campaigns", "view_reports"], [5]],
      ["permissionSet", "US", null, "Analysts", null, [14]],
      ["department", null, null, "engineering", null, ["department-default"]],
    ]);
  });

  it("without the first rule's group, its strings go to the next rule that gives them", () => {
    expect(rows(granular, [{ displayName: "Support" }]).filter((r) => r[0] === "workspace" && r[1] === "EU")).toEqual([
      ["workspace", "EU", null, "rule #2", ["view_campaigns", "view_segments"], [14]],
      ["workspace", "EU", null, "no rule", ["edit_campaigns", "launch_campaigns", "view_pii"], []],
    ]);
  });

  it("is idempotent: stored bundles (a log entry's reasons) pass as they are", () => {
    const explained = explainGrants(granular, groups, mapping, null);
    expect(reviewableGrants(granular, explained)).toEqual(explained);
  });
});

describe("which states are reviewed by bundle", () => {
  const bare: DesiredDashboardUser = {
    userName: "a@example.com",
    givenName: "A",
    familyName: "B",
    department: "engineering",
    companyPermissions: [],
    workspaces: [
      {
        appGroupName: "EU",
        appGroupPermissions: ["basic_access", "view_pii"],
        appGroupPermissionSets: [],
        team: [{ teamName: "Tier 1", teamPermissions: ["basic_access"] }],
      },
    ],
  };
  it.each<[string, DesiredDashboardUser, boolean]>([
    ["marked granular", granular, true],
    ["a legacy state", bare, false],
    [
      "an unmarked state with a granular-only string",
      { ...bare, workspaces: [{ ...bare.workspaces[0]!, appGroupPermissions: ["view_campaigns"] }] },
      true,
    ],
    ["an unmarked state with a role", { ...bare, roles: ["Marketer"] }, true],
    [
      "strings spelled alike in both models only",
      { ...bare, workspaces: [{ ...bare.workspaces[0]!, appGroupPermissions: ["admin", "view_pii"], team: [] }] },
      false,
    ],
  ])("%s: %s", (_name, user, expected) => {
    expect(reviewedByBundle(user)).toBe(expected);
  });

  it("a legacy state keeps one grant per string, as before", () => {
    expect(rows(bare).map((r) => [r[0], r[3], r[4]])).toEqual([
      ["workspace", "basic_access", null],
      ["workspace", "view_pii", null],
      ["team", "basic_access", null],
      ["department", "engineering", null],
    ]);
  });
});

describe("a bundle in words", () => {
  it.each<[string, Parameters<typeof grantWords>[0], string]>([
    [
      "a workspace's, all shown up to four, in the documentation's order",
      {
        scope: "workspace",
        workspace: "EU",
        team: null,
        permission: "rule 'EU marketers'",
        bundle: ["launch_campaigns", "view_campaigns", "edit_campaigns"],
      },
      "3 permissions in EU from rule 'EU marketers': view_campaigns, edit_campaigns, launch_campaigns",
    ],
    [
      "45 strings: the first three",
      {
        scope: "workspace",
        workspace: "EU Production",
        team: null,
        permission: "rule #3",
        bundle: [...BASIC_ACCESS_GRANULAR, "launch_campaigns", "launch_canvases"].sort(),
      },
      "45 permissions in EU Production from rule #3: view_campaigns, edit_campaigns, archive_campaigns, …",
    ],
    [
      "a team's, with the platform's display name",
      { scope: "team", workspace: "EU", team: "Tier 1", permission: "no rule", bundle: ["admin"] },
      "1 permission in team Tier 1 of EU not granted by any rule: admin (Workspace Admin)",
    ],
    ["a role", { scope: "role", workspace: null, team: null, permission: "Marketer" }, "role Marketer"],
    [
      "one string of a revoked bundle",
      { scope: "workspace", workspace: "EU", team: null, permission: "view_campaigns", partOf: "rule 'EU marketers'" },
      "view_campaigns in EU (revoked with the permissions from rule 'EU marketers')",
    ],
    [
      "a legacy string, as before",
      { scope: "workspace", workspace: "EU", team: null, permission: "admin" },
      "admin in EU",
    ],
  ])("%s", (_name, grant, expected) => {
    expect(grantWords(grant)).toBe(expected);
  });

  it("bundleWords and grantWords agree", () => {
    const bundle = { scope: "workspace", workspace: "EU", team: null, permission: "rule #1", bundle: ["view_pii"] };
    expect(grantWords(bundle)).toBe(bundleWords(bundle));
  });
});

describe("denies of a granular state", () => {
  const deny = (scope: DeniedGrant["scope"], workspace: string | null, permission: string): DeniedGrant => ({
    scope,
    workspace,
    team: null,
    permission,
  });

  it("a revoked role goes, and `roles` with the last one (equal states stay deep-equal)", () => {
    const withTwo = { ...granular, roles: ["Analyst", "Marketer"] };
    expect(applyDenies(withTwo, [deny("role", null, "Marketer")]).desired!.roles).toEqual(["Analyst"]);
    const { desired } = applyDenies(withTwo, [deny("role", null, "Marketer"), deny("role", null, "Analyst")]);
    expect(desired).not.toHaveProperty("roles");
    expect(desired!.permissionModel).toBe("granular");
  });

  it("a revoked bundle is denied string by string: its strings go, the workspace's others stay", () => {
    const bundle = explainGrants(granular, groups, mapping, null).find((g) => g.permission === "rule 'EU marketers'")!;
    const denies = bundle.bundle!.map((p) => ({ ...deny("workspace", "EU", p), partOf: bundle.permission }));
    const { desired, notGranted } = applyDenies(granular, denies);
    expect(desired!.workspaces[0]).toMatchObject({ appGroupPermissions: ["view_pii", "view_segments"] });
    expect(desired!.workspaces[0]!.team).toEqual(granular.workspaces[0]!.team);
    expect(notGranted).toEqual([]);
  });
});
