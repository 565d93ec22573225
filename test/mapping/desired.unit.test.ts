import { describe, expect, it } from "vitest";
import { parseMapping } from "../../src/mapping/file.js";
import { changedRules } from "../../src/mapping/change.js";
import {
  affectedByMappingChange,
  desiredDashboardUser,
  matchingRules,
  type MappingGroup,
  type MappingUser,
} from "../../src/mapping/index.js";

const mapping = parseMapping(
  `department:
  default: engineering
  fromAttribute: true
  translate: { "Finance & Accounting": finance }
  allowed: [agency, bi, c_suite, engineering, finance, marketing, pm]
rules:
  - group: Platform Admins
    companyPermissions: [admin]
  - groupExternalId: 00g1abcd
    department: marketing
    workspaces:
      - name: EU Production
        permissions: [send_campaigns_canvases, basic_access]
        permissionSets: [Read only]
        teams:
          - name: Lifecycle
            permissions: [basic_access]
  - groupPattern: "^Analysts-"
    workspaces:
      - name: EU Production
        permissions: [export_user_data, basic_access]
        permissionSets: [Read only, Exporters]
        teams:
          - name: Lifecycle
            permissions: [export_user_data]
          - name: Acquisition
            permissions: [basic_access]
      - name: APAC
        permissions: [basic_access]
  - groups: [Finance, Support]
    department: finance
    companyPermissions: [manage_company_settings, admin]
  - group: Sales
    workspaces:
      - name: APAC
        permissions: [basic_access]
`,
  "test.yaml",
);

const ada: MappingUser = { userName: "ada@example.com", active: true, givenName: "Ada", familyName: "Lovelace" };
const g = (displayName: string, externalId?: string): MappingGroup => ({
  displayName,
  ...(externalId ? { externalId } : {}),
});

describe("desiredDashboardUser: who gets an account", () => {
  const cases: { name: string; user: MappingUser; groups: MappingGroup[]; account: boolean }[] = [
    { name: "active and matched by group name", user: ada, groups: [g("Platform Admins")], account: true },
    { name: "group name is case-insensitive", user: ada, groups: [g("platform ADMINS")], account: true },
    { name: "group name ignores surrounding spaces", user: ada, groups: [g(" Platform Admins ")], account: true },
    { name: "matched by externalId", user: ada, groups: [g("Renamed Marketing", "00g1abcd")], account: true },
    { name: "externalId is exact", user: ada, groups: [g("Renamed Marketing", "00G1ABCD")], account: false },
    { name: "matched by pattern", user: ada, groups: [g("Analysts-EU")], account: true },
    { name: "pattern is anchored as written", user: ada, groups: [g("Senior Analysts-EU")], account: false },
    { name: "pattern is case-insensitive", user: ada, groups: [g("analysts-eu")], account: true },
    { name: "matched by one of `groups`", user: ada, groups: [g("support")], account: true },
    { name: "no matching group", user: ada, groups: [g("Everyone")], account: false },
    { name: "no groups at all", user: ada, groups: [], account: false },
    {
      name: "inactive user loses the account",
      user: { ...ada, active: false },
      groups: [g("Platform Admins")],
      account: false,
    },
  ];
  it.each(cases)("$name", ({ user, groups, account }) => {
    expect(desiredDashboardUser(user, groups, mapping) !== null).toBe(account);
  });
});

describe("desiredDashboardUser: permissions are unioned, sorted and de-duplicated", () => {
  it("a single rule gives its grants, sorted", () => {
    expect(desiredDashboardUser(ada, [g("Marketing", "00g1abcd")], mapping)).toEqual({
      userName: "ada@example.com",
      givenName: "Ada",
      familyName: "Lovelace",
      department: "marketing",
      companyPermissions: [],
      workspaces: [
        {
          appGroupName: "EU Production",
          appGroupPermissions: ["basic_access", "send_campaigns_canvases"],
          appGroupPermissionSets: ["Read only"],
          team: [{ teamName: "Lifecycle", teamPermissions: ["basic_access"] }],
        },
      ],
    });
  });

  it("unions per company, per workspace and per team across rules", () => {
    const desired = desiredDashboardUser(
      ada,
      [g("Analysts-EU"), g("Marketing", "00g1abcd"), g("Finance"), g("Platform Admins"), g("Sales")],
      mapping,
    );
    expect(desired).toEqual({
      userName: "ada@example.com",
      givenName: "Ada",
      familyName: "Lovelace",
      department: "marketing",
      companyPermissions: ["admin", "manage_company_settings"],
      workspaces: [
        { appGroupName: "APAC", appGroupPermissions: ["basic_access"], appGroupPermissionSets: [], team: [] },
        {
          appGroupName: "EU Production",
          appGroupPermissions: ["basic_access", "export_user_data", "send_campaigns_canvases"],
          appGroupPermissionSets: ["Exporters", "Read only"],
          team: [
            { teamName: "Acquisition", teamPermissions: ["basic_access"] },
            { teamName: "Lifecycle", teamPermissions: ["basic_access", "export_user_data"] },
          ],
        },
      ],
    });
  });

  it("does not depend on the order of the user's groups", () => {
    const groups = [g("Analysts-EU"), g("Marketing", "00g1abcd"), g("Finance"), g("Sales")];
    expect(desiredDashboardUser(ada, [...groups].reverse(), mapping)).toEqual(
      desiredDashboardUser(ada, groups, mapping),
    );
  });

  it("two groups matching the same rule count once", () => {
    const one = desiredDashboardUser(ada, [g("Finance")], mapping);
    expect(desiredDashboardUser(ada, [g("Finance"), g("Support")], mapping)).toEqual(one);
  });
});

describe("desiredDashboardUser: department", () => {
  const cases: { name: string; user: Partial<MappingUser>; groups: MappingGroup[]; department: string }[] = [
    {
      name: "first matching rule in file order that sets one",
      user: {},
      groups: [g("Finance"), g("Marketing", "00g1abcd")],
      department: "marketing",
    },
    {
      name: "a rule's department beats the enterprise department",
      user: { department: "pm" },
      groups: [g("Finance")],
      department: "finance",
    },
    {
      name: "enterprise department when no rule sets one",
      user: { department: "pm" },
      groups: [g("Platform Admins")],
      department: "pm",
    },
    {
      name: "enterprise department translated",
      user: { department: "Finance & Accounting" },
      groups: [g("Sales")],
      department: "finance",
    },
    {
      name: "translation keys are case-insensitive",
      user: { department: "finance & accounting" },
      groups: [g("Sales")],
      department: "finance",
    },
    {
      name: "allowed is checked case-insensitively, with the allowed spelling",
      user: { department: "Marketing" },
      groups: [g("Sales")],
      department: "marketing",
    },
    {
      name: "not allowed falls back to the default",
      user: { department: "Legal" },
      groups: [g("Sales")],
      department: "engineering",
    },
    {
      name: "blank enterprise department uses the default",
      user: { department: "  " },
      groups: [g("Sales")],
      department: "engineering",
    },
    {
      name: "no enterprise department uses the default",
      user: { department: null },
      groups: [g("Sales")],
      department: "engineering",
    },
  ];
  it.each(cases)("$name", ({ user, groups, department }) => {
    expect(desiredDashboardUser({ ...ada, ...user }, groups, mapping)?.department).toBe(department);
  });

  it("fromAttribute: false ignores the enterprise department", () => {
    const m = { ...mapping, department: { ...mapping.department, fromAttribute: false } };
    expect(desiredDashboardUser({ ...ada, department: "pm" }, [g("Sales")], m)?.department).toBe("engineering");
  });

  it("without allowed, any enterprise department passes (translated when listed)", () => {
    const m = {
      ...mapping,
      department: { default: "engineering", fromAttribute: true, translate: { Fin: "finance" } },
    };
    expect(desiredDashboardUser({ ...ada, department: "Legal" }, [g("Sales")], m)?.department).toBe("Legal");
    expect(desiredDashboardUser({ ...ada, department: "Fin" }, [g("Sales")], m)?.department).toBe("finance");
  });
});

describe("desiredDashboardUser: names", () => {
  const cases: { name: string; user: Partial<MappingUser>; expected: [string, string] }[] = [
    { name: "given and family names as sent", user: {}, expected: ["Ada", "Lovelace"] },
    { name: "trimmed", user: { givenName: " Ada ", familyName: " Lovelace " }, expected: ["Ada", "Lovelace"] },
    {
      name: "from displayName when missing",
      user: { givenName: null, familyName: null, displayName: "Grace Brewster Hopper" },
      expected: ["Grace", "Brewster Hopper"],
    },
    {
      name: "from the email's local part as a last resort",
      user: { givenName: "", familyName: undefined },
      expected: ["ada", "ada"],
    },
  ];
  it.each(cases)("$name", ({ user, expected }) => {
    const desired = desiredDashboardUser({ ...ada, ...user }, [g("Sales")], mapping);
    expect([desired?.givenName, desired?.familyName]).toEqual(expected);
  });
});

describe("matchingRules", () => {
  it("says which rules matched, by which groups and how, in file order", () => {
    const matched = matchingRules([g("Sales"), g("Analysts-EU"), g("Mkt", "00g1abcd"), g("support")], mapping);
    expect(
      matched.map((m) => ({
        rule: m.rule.index,
        line: m.rule.line,
        matches: m.matches.map((x) => [x.group.displayName, x.by]),
      })),
    ).toEqual([
      { rule: 1, line: 9, matches: [["Mkt", "groupExternalId"]] },
      { rule: 2, line: 18, matches: [["Analysts-EU", "groupPattern"]] },
      { rule: 3, line: 30, matches: [["support", "group"]] },
      { rule: 4, line: 33, matches: [["Sales", "group"]] },
    ]);
  });
});

describe("affectedByMappingChange", () => {
  const groups = [g("Platform Admins"), g("Analysts-EU"), g("Sales"), g("Everyone")];

  it("only groups whose matching rules changed", () => {
    const changed = parseMapping(
      `department: { default: engineering }\nrules:\n  - group: Platform Admins\n    companyPermissions: [admin]\n  - group: Sales\n    companyPermissions: [admin]\n`,
    );
    const before = parseMapping(
      `department: { default: engineering }\nrules:\n  - group: Platform Admins\n    companyPermissions: [admin]\n  - group: Sales\n    workspaces: [{ name: APAC, permissions: [basic_access] }]\n`,
    );
    expect(affectedByMappingChange(before, changed, groups)).toEqual({ all: false, groups: [g("Sales")] });
    expect(affectedByMappingChange(before, before, groups)).toEqual({ all: false, groups: [] });
  });

  it("everyone when the department policy changed", () => {
    const other = { ...mapping, department: { ...mapping.department, default: "pm" } };
    expect(affectedByMappingChange(mapping, other, groups)).toEqual({ all: true });
  });
});

describe("changedRules (named in the log's mapping-change triggers)", () => {
  const before = parseMapping(
    `department: { default: engineering }\nrules:\n  - group: Platform Admins\n    companyPermissions: [admin]\n  - description: Analysts export data\n    groupPattern: "^Analysts-"\n    workspaces: [{ name: EU, permissions: [basic_access] }]\n  - group: Sales\n    companyPermissions: [admin]\n`,
  );

  it("names added and changed rules by their new line, removed ones by their old line; a moved rule is not a change", () => {
    const after = parseMapping(
      `department: { default: engineering }\nrules:\n  - description: Analysts export data\n    groupPattern: "^Analysts-"\n    workspaces: [{ name: EU, permissions: [basic_access, export_user_data] }]\n  - group: Platform Admins\n    companyPermissions: [admin]\n`,
    );
    expect(changedRules(before, after)).toEqual([
      { line: 3, name: "Analysts export data" },
      { line: 8, name: "group Sales", removed: true },
    ]);
    expect(changedRules(before, before)).toEqual([]);
    expect(changedRules(undefined, after)).toEqual([]);
  });
});
