import { describe, expect, it } from "vitest";
import { parseMapping, MappingError } from "../../src/mapping/file.js";
import { desiredDashboardUser } from "../../src/mapping/desired.js";
import { granularOf, inSameTerms, modelOfUser, toGranular } from "../../src/mapping/granular.js";
import type { DesiredDashboardUser } from "../../src/mapping/types.js";
import { BASIC_ACCESS_GRANULAR } from "../../src/vocabulary/permissions.js";
import { fromPlatformResource, identifierKeysOf, toPlatformResource } from "../../src/platform/scim.js";
import { planReconcile, priorityOf } from "../../src/reconcile/planner.js";

/**
 * The granular permission model on the connector's side, pure: the mapping file's new keys and
 * checks, the legacy → granular translation, and the planner's 0-call re-base.
 */

const DEPARTMENT = "department: { default: engineering }\n";
const ROLE_ID = "3f6c2a4e-1b2d-4c5e-8f90-a1b2c3d4e5f6";
const WS_ID = "11111111-2222-4333-8444-555555555555";

const user = { userName: "ana@example.com", active: true, givenName: "Ana", familyName: "Lima" };
const groups = [{ id: "g1", displayName: "Marketing", externalId: null }];

function legacyAlice(): DesiredDashboardUser {
  return {
    userName: "ana@example.com",
    givenName: "Ana",
    familyName: "Lima",
    department: "engineering",
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
}

describe("the mapping file in the granular model", () => {
  it("infers the model: legacy when a legacy-only string is used, with one warning per string naming its equivalents", () => {
    const mapping = parseMapping(
      `${DEPARTMENT}rules:\n  - group: Marketing\n    workspaces:\n      - name: EU Production\n        permissions: [basic_access, send_campaigns_canvases, basic_access]\n`,
    );
    expect(mapping.permissionModel).toBe("legacy");
    expect(mapping.warnings.map((w) => w.message)).toEqual([
      expect.stringContaining(
        "legacy permission 'basic_access' (granular: view_campaigns, edit_campaigns, archive_campaigns, … (43))",
      ),
      expect.stringContaining(
        "legacy permission 'send_campaigns_canvases' (granular: launch_campaigns, launch_canvases)",
      ),
    ]);
    expect(mapping.warnings[0]!.message).toContain("scim-connector mapping migrate");
  });

  it("names a display-only equivalent and how to declare it", () => {
    const mapping = parseMapping(
      `${DEPARTMENT}rules:\n  - group: Marketing\n    workspaces:\n      - name: EU Production\n        permissions: [approve_deny_campaigns]\n`,
    );
    expect(mapping.warnings[0]!.message).toContain(
      '"Approve Campaigns", "Approve Canvases" has no published SCIM string',
    );
  });

  it("is granular when it uses granular strings, roles and identifiers; a legacy string there is an error", () => {
    const mapping = parseMapping(
      `permissionModel: granular\n${DEPARTMENT}rules:\n  - group: Marketing\n    roles: [Marketer, { id: ${ROLE_ID.toUpperCase()} }]\n    workspaces:\n      - id: ${WS_ID}\n        name: EU Production\n        permissions: [launch_campaigns]\n      - name: Staging\n        permissionSets: [{ name: Developers }]\n`,
    );
    expect(mapping.permissionModel).toBe("granular");
    expect(mapping.warnings).toEqual([]);
    expect(mapping.rules[0]!.roles).toEqual(["Marketer", `id:${ROLE_ID}`]);
    expect(mapping.rules[0]!.workspaces.map((w) => w.name)).toEqual([`id:${WS_ID}`, "Staging"]);

    const refused = () =>
      parseMapping(
        `permissionModel: granular\n${DEPARTMENT}rules:\n  - group: M\n    workspaces:\n      - name: W\n        permissions: [basic_access]\n`,
      );
    expect(refused).toThrow(MappingError);
    expect(refused).toThrow(/'basic_access' is a legacy permission in a granular mapping/);
  });

  it("refuses permissions and a permission set in one workspace entry, several sets, and an entry without name or id", () => {
    const problems = (yaml: string) => {
      try {
        parseMapping(yaml);
        return [];
      } catch (error) {
        return (error as MappingError).problems;
      }
    };
    expect(
      problems(
        `${DEPARTMENT}rules:\n  - group: M\n    workspaces:\n      - name: W\n        permissions: [launch_campaigns]\n        permissionSets: [Developers]\n`,
      ).join("\n"),
    ).toContain("gives both permissions and a permission set");
    expect(
      problems(
        `${DEPARTMENT}rules:\n  - group: M\n    workspaces:\n      - name: W\n        permissionSets: [A, B]\n`,
      ).join("\n"),
    ).toContain("gives 2 permission sets: the platform takes one per workspace");
    expect(
      problems(`${DEPARTMENT}rules:\n  - group: M\n    workspaces:\n      - permissions: [launch_campaigns]\n`).join(
        "\n",
      ),
    ).toContain("give `name:` or `id:`");
    expect(
      problems(
        `${DEPARTMENT}rules:\n  - group: M\n    workspaces:\n      - id: not-a-uuid\n        permissions: [launch_campaigns]\n`,
      ).join("\n"),
    ).toContain("must be an API identifier");
  });

  it("desired state: roles, identifiers, the model; permissions win over a set another rule gives", () => {
    const mapping = parseMapping(
      `${DEPARTMENT}rules:\n  - group: Marketing\n    roles: [Marketer]\n    workspaces:\n      - id: ${WS_ID}\n        permissions: [launch_campaigns]\n  - group: Marketing\n    workspaces:\n      - id: ${WS_ID}\n        permissionSets: [Developers]\n      - name: Staging\n        permissionSets: [Developers]\n`,
    );
    const desired = desiredDashboardUser(user, groups, mapping)!;
    expect(desired.permissionModel).toBe("granular");
    expect(desired.roles).toEqual(["Marketer"]);
    expect(desired.workspaces).toEqual([
      { appGroupName: "Staging", appGroupPermissions: [], appGroupPermissionSets: ["Developers"], team: [] },
      { appGroupName: `id:${WS_ID}`, appGroupPermissions: ["launch_campaigns"], appGroupPermissionSets: [], team: [] },
    ]);
    // Sent by identifier where the mapping names one, by name elsewhere.
    const sent = toPlatformResource(desired).permissions;
    expect(sent.roles).toEqual([{ roleName: "Marketer" }]);
    expect(sent.appGroup).toEqual([
      {
        appGroupName: "Staging",
        appGroupPermissions: [],
        appGroupPermissionSets: [{ appGroupPermissionSetName: "Developers" }],
      },
      { appGroupId: WS_ID, appGroupPermissions: ["launch_campaigns"] },
    ]);
  });
});

describe("legacy → granular translation", () => {
  it("follows the published table; a display-only equivalent needs the operator's word", () => {
    expect(granularOf("send_campaigns_canvases", {})).toEqual({ strings: ["launch_campaigns", "launch_canvases"] });
    expect(granularOf("basic_access", {})).toEqual({ strings: [...BASIC_ACCESS_GRANULAR] });
    expect(granularOf("export_user_data", {})).toEqual({ unresolved: ["Export User Data"] });
    expect(granularOf("export_user_data", { "Export User Data": "export_user_data" })).toEqual({
      strings: ["export_user_data"],
    });
    expect(granularOf("publish_cards", {})).toEqual({ unresolved: ["publish_cards"] });
    expect(granularOf("publish_cards", { publish_cards: [] })).toEqual({ strings: [] });
  });

  it("translates a whole user, or says it cannot", () => {
    const translated = toGranular(legacyAlice(), {})!;
    expect(translated.permissionModel).toBe("granular");
    expect(translated.workspaces[0]!.appGroupPermissions).toEqual(
      [...BASIC_ACCESS_GRANULAR, "launch_campaigns", "launch_canvases"].sort(),
    );
    expect(translated.workspaces[0]!.team[0]!.teamPermissions).toEqual([...BASIC_ACCESS_GRANULAR].sort());
    const withExport = legacyAlice();
    withExport.workspaces[0]!.appGroupPermissions.push("export_user_data");
    expect(toGranular(withExport, {})).toBeUndefined();
  });

  it("reads the model of a state from its strings", () => {
    expect(modelOfUser(legacyAlice())).toBe("legacy");
    expect(modelOfUser(toGranular(legacyAlice(), {})!)).toBe("granular");
    expect(modelOfUser({ ...legacyAlice(), workspaces: [] })).toBe("either");
    expect(modelOfUser({ ...legacyAlice(), workspaces: [], roles: ["Marketer"] })).toBe("granular");
  });

  it("compares a legacy state with a granular one in granular terms", () => {
    const granular = toGranular(legacyAlice(), {})!;
    expect(inSameTerms(legacyAlice(), granular, {})).toEqual({ before: granular, after: granular, rebased: true });
    expect(inSameTerms(granular, legacyAlice(), {}).after).toEqual(granular);
    expect(inSameTerms(legacyAlice(), legacyAlice(), {}).rebased).toBe(false);
  });
});

describe("the planner across the models", () => {
  const account = (lastApplied: DesiredDashboardUser) => ({
    userName: "ana@example.com",
    platformId: "p1",
    state: "active" as const,
    lastApplied,
  });
  const policies = { onEmailChange: "hold" as const };
  const now = new Date("2026-11-28T12:00:00Z");

  it("re-bases, with no call, an account whose legacy state means what the granular mapping grants", () => {
    const plan = planReconcile(toGranular(legacyAlice(), {})!, account(legacyAlice()), policies, { now });
    expect(plan.action).toBe("rebase");
    expect(priorityOf(plan)).toBeNull();
  });

  it("updates, with the change in granular terms, an account whose access really changes", () => {
    const desired = toGranular(legacyAlice(), {})!;
    desired.workspaces[0]!.appGroupPermissions = desired.workspaces[0]!.appGroupPermissions.filter(
      (p) => p !== "launch_canvases",
    );
    const plan = planReconcile(desired, account(legacyAlice()), policies, { now });
    expect(plan.action).toBe("update");
    if (plan.action !== "update") return;
    expect(plan.reduction).toBe(true);
    expect(plan.changes).toEqual([
      { kind: "permissions", path: "workspaces[EU Production].permissions", added: [], removed: ["launch_canvases"] },
    ]);
  });

  it("cannot re-base without the operator's equivalents, so it sends the state (never guesses)", () => {
    const legacy = legacyAlice();
    legacy.workspaces[0]!.appGroupPermissions.push("export_user_data");
    const granular = { ...toGranular(legacyAlice(), {})! };
    granular.workspaces = [
      {
        ...granular.workspaces[0]!,
        appGroupPermissions: [...granular.workspaces[0]!.appGroupPermissions, "export_user_data"],
      },
    ];
    expect(planReconcile(granular, account(legacy), policies, { now }).action).toBe("update");
    expect(
      planReconcile(granular, account(legacy), policies, {
        now,
        equivalents: { "Export User Data": "export_user_data" },
      }).action,
    ).toBe("rebase");
  });
});

describe("platform answers in the granular model", () => {
  it("keys what the mapping names by identifier by that identifier, whatever the platform calls it now", () => {
    const answer = {
      userName: "ana@example.com",
      name: { givenName: "Ana", familyName: "Lima" },
      department: "engineering",
      permissions: {
        companyPermissions: [],
        roles: [{ roleName: "Marketer (renamed)", roleId: ROLE_ID }],
        appGroup: [
          {
            appGroupId: WS_ID,
            appGroupName: "EU Production (renamed)",
            appGroupPermissions: ["launch_campaigns"],
            appGroupPermissionSets: [],
            team: [],
          },
        ],
      },
    };
    const desired: DesiredDashboardUser = {
      userName: "ana@example.com",
      givenName: "Ana",
      familyName: "Lima",
      department: "engineering",
      companyPermissions: [],
      roles: [`id:${ROLE_ID}`],
      workspaces: [
        {
          appGroupName: `id:${WS_ID}`,
          appGroupPermissions: ["launch_campaigns"],
          appGroupPermissionSets: [],
          team: [],
        },
      ],
      permissionModel: "granular",
    };
    expect(fromPlatformResource(answer, identifierKeysOf(desired))).toEqual(desired);
    // By name when the mapping names things by name.
    expect(fromPlatformResource(answer).workspaces[0]!.appGroupName).toBe("EU Production (renamed)");
  });
});
