import { describe, expect, it } from "vitest";
import { describeReason, grantSince } from "../../src/review/access/grants.js";
import { grantKey, grantsOf, reasonsFor, type Grant } from "../../src/mapping/reasons.js";
import { parseMapping } from "../../src/mapping/file.js";
import { matchingRules } from "../../src/mapping/match.js";
import type { DesiredDashboardUser } from "../../src/mapping/types.js";

/** The access report's pure parts: grants of a held user, every rule that gives one, unbroken holding since. */

const mapping = parseMapping(
  `department:
  default: engineering
rules:
  - group: Marketing
    description: EU marketers
    department: marketing
    workspaces:
      - name: EU
        permissions: [basic_access]
  - groupPattern: "^Support-"
    description: Support agents
    workspaces:
      - name: EU
        permissions: [basic_access, view_user_profile]
        teams:
          - name: Tier 1
            permissions: [basic_access]
`,
  "mapping.yaml",
);

const user = (ws: DesiredDashboardUser["workspaces"], department = "marketing"): DesiredDashboardUser => ({
  userName: "a@example.com",
  givenName: "A",
  familyName: "B",
  department,
  companyPermissions: [],
  workspaces: ws,
});
const eu = (permissions: string[], team: string[] = []) => ({
  appGroupName: "EU",
  appGroupPermissions: permissions,
  appGroupPermissionSets: [],
  team: team.length ? [{ teamName: "Tier 1", teamPermissions: team }] : [],
});
const g = (scope: Grant["scope"], permission: string, team: string | null = null): Grant => ({
  scope,
  workspace: scope === "department" ? null : "EU",
  team,
  permission,
});

describe("grantsOf", () => {
  it("lists workspace, team and department grants", () => {
    expect(grantsOf(user([eu(["basic_access"], ["basic_access"])])).map(grantKey)).toEqual(
      [g("workspace", "basic_access"), g("team", "basic_access", "Tier 1"), g("department", "marketing")].map(grantKey),
    );
  });
});

describe("reasonsFor", () => {
  const groups = [{ displayName: "Marketing" }, { displayName: "Support-EU" }];
  it.each<[string, Grant, string[]]>([
    [
      "two rules, one permission: both",
      g("workspace", "basic_access"),
      ["rule 'EU marketers' (mapping.yaml:4) via Marketing", "rule 'Support agents' (mapping.yaml:10) via Support-EU"],
    ],
    ["one rule", g("workspace", "view_user_profile"), ["rule 'Support agents' (mapping.yaml:10) via Support-EU"]],
    [
      "a team permission",
      g("team", "basic_access", "Tier 1"),
      ["rule 'Support agents' (mapping.yaml:10) via Support-EU"],
    ],
    [
      "the department from a rule",
      g("department", "marketing"),
      ["rule 'EU marketers' (mapping.yaml:4) via Marketing"],
    ],
    ["nothing gives it any more", g("workspace", "export_user_data"), []],
  ])("%s", (_name, grant, expected) => {
    expect(reasonsFor(grant, matchingRules(groups, mapping), mapping, null).map(describeReason)).toEqual(expected);
  });
  it("a department from the attribute or the default", () => {
    expect(
      reasonsFor(g("department", "finance"), matchingRules([], mapping), mapping, "finance").map(describeReason),
    ).toEqual(["the IdP's department attribute"]);
    expect(
      reasonsFor(g("department", "engineering"), matchingRules([], mapping), mapping, null).map(describeReason),
    ).toEqual(["the mapping's default department"]);
  });
});

describe("grantSince", () => {
  const at = (day: number) => new Date(Date.UTC(2026, 5, day));
  it("keeps the first date while the grant is held, restarts it after a break", () => {
    const since = grantSince([
      { logId: "1", at: at(1), after: user([eu(["basic_access"])]) },
      { logId: "2", at: at(2), after: user([eu(["basic_access", "view_user_profile"])]) },
      { logId: "3", at: at(3), after: null },
      { logId: "4", at: at(4), after: user([eu(["view_user_profile"])]) },
      { logId: "5", at: at(5), after: user([eu(["basic_access", "view_user_profile"])]) },
    ]);
    expect(since.get(grantKey(g("workspace", "view_user_profile")))).toEqual({ since: at(4), logId: "4" });
    expect(since.get(grantKey(g("workspace", "basic_access")))).toEqual({ since: at(5), logId: "5" });
    expect(since.get(grantKey(g("department", "marketing")))).toEqual({ since: at(4), logId: "4" });
  });
});
