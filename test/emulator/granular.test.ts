import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { emulatorCommandOptions, emulatorPermissions } from "../../src/cli/emulator.js";
import { ConfigError, loadEnv } from "../../src/config/env.js";
import {
  acceptedLegacyPermissions,
  inventedScimString,
  migratedPermissions,
} from "../../src/emulator/dashboard/permissionModel.js";
import { BASIC_ACCESS_GRANULAR } from "../../src/vocabulary/permissions.js";
import { dashboardUser, startClient, type Client } from "./harness.js";

/** The two permission models of shared/platform-granular.md, the migration and the directory, over real HTTP. */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SCIM_ERROR = "urn:ietf:params:scim:api:messages:2.0:Error";

function user(userName: string, permissions: Record<string, unknown>) {
  return { ...dashboardUser(userName), permissions: { companyPermissions: [], ...permissions } };
}

const DIRECTORY = {
  workspaces: [{ name: "EU Production", teams: [{ name: "Growth" }] }],
  roles: [
    {
      roleName: "Marketer – Fashion Brands",
      workspaces: [{ appGroupName: "[PROD] Fashion Brand", appGroupPermissions: ["view_campaigns"] }],
    },
  ],
  permissionSets: [{ name: "Marketers", permissions: ["view_campaigns", "edit_campaigns"] }],
};

describe("the legacy model stays the default", () => {
  let c: Client;
  beforeAll(async () => {
    c = await startClient();
  });
  afterAll(() => c.close());

  it("without the option the company is legacy: 24-hex ids, no roles, legacy strings kept as sent", async () => {
    expect((await c.control("GET", "/permissions")).body).toEqual({ model: "legacy", legacy: "accepted" });
    const created = await c.scim("POST", "/scim/v2/Users", dashboardUser("legacy@example.com"));
    expect(created.status).toBe(201);
    expect(Object.keys(created.body.permissions)).toEqual(["companyPermissions", "appGroup"]);
    const [ws] = created.body.permissions.appGroup;
    expect(Object.keys(ws)).toEqual([
      "appGroupId",
      "appGroupName",
      "appGroupPermissions",
      "team",
      "appGroupPermissionSets",
    ]);
    expect(ws.appGroupId).toMatch(/^[0-9a-f]{24}$/);
    expect(ws.team[0].teamId).toMatch(/^[0-9a-f]{24}$/);
    expect(ws.appGroupPermissions).toEqual(["send_campaigns_canvases"]);
  });
});

describe("the migration: POST /_emulator/permissions", () => {
  let c: Client;
  beforeAll(async () => {
    c = await startClient();
  });
  afterAll(() => c.close());
  beforeEach(() => c.control("POST", "/reset"));

  it("replaces basic_access by its 43 strings and send_campaigns_canvases by launch_campaigns + launch_canvases on existing users", async () => {
    const ada = await c.scim(
      "POST",
      "/scim/v2/Users",
      user("ada@example.com", {
        companyPermissions: ["manage_company_settings"],
        appGroup: [
          {
            appGroupName: "EU Production",
            appGroupPermissions: ["basic_access", "publish_cards"],
            team: [{ teamName: "Growth", teamPermissions: ["send_campaigns_canvases"] }],
          },
        ],
      }),
    );
    const bob = await c.scim(
      "POST",
      "/scim/v2/Users",
      user("bob@example.com", {
        appGroup: [{ appGroupName: "EU Production", appGroupPermissions: ["approve_deny_campaigns", "publish_cards"] }],
      }),
    );
    const answer = await c.control("POST", "/permissions", { model: "granular", legacy: "accepted" });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      model: "granular",
      legacy: "accepted",
      usersMigrated: 2,
      droppedPermissions: { publish_cards: 2 },
    });

    const got = (await c.scim("GET", `/scim/v2/Users/${ada.body.id}`)).body;
    expect(got.permissions.companyPermissions).toEqual(["manage_company_settings"]);
    const [ws] = got.permissions.appGroup;
    expect(ws.appGroupName).toBe("EU Production");
    expect(ws.appGroupPermissions).toEqual([...BASIC_ACCESS_GRANULAR]);
    expect(ws.appGroupPermissions).toHaveLength(43);
    expect(ws.team[0].teamPermissions).toEqual(["launch_campaigns", "launch_canvases"]);
    // Display-name-only equivalents get the emulator's own strings.
    expect(
      (await c.scim("GET", `/scim/v2/Users/${bob.body.id}`)).body.permissions.appGroup[0].appGroupPermissions,
    ).toEqual(["approve_campaigns", "approve_canvases"]);
    expect((await c.control("GET", "/permissions")).body).toEqual({ model: "granular", legacy: "accepted" });
  });

  it("after the migration the same workspace answers with a UUID, and the answers take the granular shape", async () => {
    const before = await c.scim("POST", "/scim/v2/Users", dashboardUser("ada@example.com"));
    await c.control("POST", "/permissions", { model: "granular", legacy: "refused" });
    const after = (await c.scim("GET", `/scim/v2/Users/${before.body.id}`)).body;
    expect(Object.keys(after.permissions)).toEqual(["companyPermissions", "roles", "appGroup"]);
    expect(after.permissions.appGroup[0].appGroupId).toMatch(UUID);
    expect(after.permissions.appGroup[0].appGroupName).toBe(before.body.permissions.appGroup[0].appGroupName);
  });

  it("going back from granular to legacy is 400 and changes nothing", async () => {
    await c.control("POST", "/permissions", { model: "granular" });
    const back = await c.control("POST", "/permissions", { model: "legacy" });
    expect(back.status).toBe(400);
    expect(back.body.message).toContain("never goes back");
    expect((await c.control("GET", "/permissions")).body).toEqual({ model: "granular", legacy: "accepted" });
    // Refusing legacy strings later is the platform's December step, and allowed.
    expect((await c.control("POST", "/permissions", { model: "granular", legacy: "refused" })).body).toMatchObject({
      legacy: "refused",
      usersMigrated: 0,
    });
  });

  it("a model change outside the two models is 400", async () => {
    expect((await c.control("POST", "/permissions", { model: "granular-ish" })).status).toBe(400);
    expect((await c.control("POST", "/permissions", { model: "legacy", legacy: "refused" })).status).toBe(400);
  });

  it("POST /_emulator/reset returns to the model the emulator started with and clears the directory", async () => {
    await c.control("POST", "/fixtures", DIRECTORY);
    await c.control("POST", "/permissions", { model: "granular" });
    await c.control("POST", "/reset");
    expect((await c.control("GET", "/permissions")).body).toEqual({ model: "legacy", legacy: "accepted" });
    expect((await c.control("GET", "/state")).body.directory).toEqual({
      workspaces: [],
      roles: [],
      permissionSets: [],
    });
  });
});

describe("the granular model", () => {
  let c: Client;
  beforeAll(async () => {
    c = await startClient({ permissions: "granular", scimJournal: true });
  });
  afterAll(() => c.close());
  beforeEach(async () => {
    await c.control("POST", "/reset");
    expect((await c.control("POST", "/fixtures", DIRECTORY)).status).toBe(200);
  });

  const directory = async () => (await c.control("GET", "/state")).body.directory;

  it("GET carries UUID identifiers for workspaces, teams, roles and permission sets, in the documented shape", async () => {
    const created = await c.scim(
      "POST",
      "/scim/v2/Users",
      user("ada@example.com", {
        roles: [{ roleName: "Marketer – Fashion Brands" }],
        appGroup: [
          {
            appGroupName: "EU Production",
            appGroupPermissionSets: [{ appGroupPermissionSetName: "Marketers" }],
            team: [{ teamName: "Growth", teamPermissions: ["view_reports"] }],
          },
        ],
      }),
    );
    expect(created.status).toBe(201);
    const got = (await c.scim("GET", `/scim/v2/Users/${created.body.id}`)).body;
    expect(got.permissions.roles).toEqual([
      { roleName: "Marketer – Fashion Brands", roleId: expect.stringMatching(UUID) },
    ]);
    const [ws] = got.permissions.appGroup;
    expect(Object.keys(ws)).toEqual([
      "appGroupId",
      "appGroupName",
      "appGroupPermissions",
      "appGroupPermissionSets",
      "team",
    ]);
    expect(ws.appGroupId).toMatch(UUID);
    expect(ws.appGroupPermissionSets).toEqual([
      { appGroupPermissionSetName: "Marketers", appGroupPermissionSetId: expect.stringMatching(UUID) },
    ]);
    expect(ws.team).toEqual([
      { teamId: expect.stringMatching(UUID), teamName: "Growth", teamPermissions: ["view_reports"] },
    ]);
    // The role's own workspaces are not expanded into appGroup (not published).
    expect(got.permissions.appGroup).toHaveLength(1);
  });

  it("writes name a workspace, team, role and permission set by name or by identifier, to the same grants", async () => {
    const byName = await c.scim(
      "POST",
      "/scim/v2/Users",
      user("names@example.com", {
        roles: [{ roleName: "Marketer – Fashion Brands" }],
        appGroup: [
          {
            appGroupName: "EU Production",
            appGroupPermissionSets: [{ appGroupPermissionSetName: "Marketers" }],
            team: [{ teamName: "Growth", teamPermissions: ["view_reports"] }],
          },
        ],
      }),
    );
    const held = byName.body.permissions;
    const [ws] = held.appGroup;
    const byId = await c.scim(
      "POST",
      "/scim/v2/Users",
      user("ids@example.com", {
        roles: [{ roleId: held.roles[0].roleId }],
        appGroup: [
          {
            appGroupId: ws.appGroupId,
            appGroupPermissionSets: [{ appGroupPermissionSetId: ws.appGroupPermissionSets[0].appGroupPermissionSetId }],
            team: [{ teamId: ws.team[0].teamId, teamPermissions: ["view_reports"] }],
          },
        ],
      }),
    );
    expect(byId.status).toBe(201);
    expect(byId.body.permissions).toEqual(held);
    // The fixtures' ids are the ones users show.
    const { workspaces, roles, permissionSets } = await directory();
    expect([workspaces[0].id, workspaces[0].teams[0].id, roles[0].id, permissionSets[0].id]).toEqual([
      ws.appGroupId,
      ws.team[0].teamId,
      held.roles[0].roleId,
      ws.appGroupPermissionSets[0].appGroupPermissionSetId,
    ]);
  });

  it("an unknown workspace or team name creates it, as the legacy model does; PUT replaces the grants", async () => {
    const created = await c.scim(
      "POST",
      "/scim/v2/Users",
      user("ada@example.com", { appGroup: [{ appGroupName: "APAC", team: [{ teamName: "New team" }] }] }),
    );
    expect(created.status).toBe(201);
    expect((await directory()).workspaces.map((w: { name: string }) => w.name)).toEqual([
      "EU Production",
      "[PROD] Fashion Brand",
      "APAC",
    ]);
    const put = await c.scim(
      "PUT",
      `/scim/v2/Users/${created.body.id}`,
      user("ada@example.com", { appGroup: [{ appGroupName: "EU Production", appGroupPermissions: ["view_pii"] }] }),
    );
    expect(put.status).toBe(200);
    expect(put.body.permissions.appGroup).toEqual([
      expect.objectContaining({ appGroupName: "EU Production", appGroupPermissions: ["view_pii"], team: [] }),
    ]);
  });

  it("permissions and a permission set on one workspace is 400 (one or the other), as are two sets", async () => {
    const both = await c.scim(
      "POST",
      "/scim/v2/Users",
      user("ada@example.com", {
        appGroup: [
          {
            appGroupName: "EU Production",
            appGroupPermissions: ["view_campaigns"],
            appGroupPermissionSets: [{ appGroupPermissionSetName: "Marketers" }],
          },
        ],
      }),
    );
    expect(both.status).toBe(400);
    expect(both.body).toMatchObject({ schemas: [SCIM_ERROR], scimType: "invalidValue" });
    expect(both.body.detail).toContain("give permissions or a permission set for a workspace, not both");
    const two = await c.scim(
      "POST",
      "/scim/v2/Users",
      user("ada@example.com", {
        appGroup: [
          {
            appGroupName: "EU Production",
            appGroupPermissionSets: [
              { appGroupPermissionSetName: "Marketers" },
              { appGroupPermissionSetName: "Marketers" },
            ],
          },
        ],
      }),
    );
    expect([two.status, two.body.detail]).toEqual([400, expect.stringContaining("at most one permission set")]);
    expect(
      (await c.scim("GET", `/scim/v2/Users?filter=${encodeURIComponent('userName eq "ada@example.com"')}`)).body
        .totalResults,
    ).toBe(0);
  });

  it.each([
    [{ roles: [{ roleId: "no-such-role" }], appGroup: [] }, 'no role with roleId "no-such-role"'],
    [{ roles: [{ roleName: "Nobody" }], appGroup: [] }, 'no role with roleName "Nobody"'],
    [{ appGroup: [{ appGroupId: "no-such-ws" }] }, 'no workspace with appGroupId "no-such-ws"'],
    [
      { appGroup: [{ appGroupName: "EU Production", team: [{ teamId: "no-such-team" }] }] },
      'no team with teamId "no-such-team" in appGroup "EU Production"',
    ],
    [
      {
        appGroup: [{ appGroupName: "EU Production", appGroupPermissionSets: [{ appGroupPermissionSetName: "Devs" }] }],
      },
      'no permission set with appGroupPermissionSetName "Devs"',
    ],
  ])("an unknown identifier or fixture is 400 naming it (%#)", async (permissions, detail) => {
    const res = await c.scim("POST", "/scim/v2/Users", user("ada@example.com", permissions));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ schemas: [SCIM_ERROR], scimType: "invalidValue" });
    expect(res.body.detail).toContain(detail);
    // Nothing was created on the way.
    expect((await directory()).workspaces).toHaveLength(2);
  });

  it("legacy accepted: a legacy-only string is stored as its granular equivalents; export_user_data is the emulator's own granular string", async () => {
    const res = await c.scim(
      "POST",
      "/scim/v2/Users",
      user("ada@example.com", {
        appGroup: [
          {
            appGroupName: "EU Production",
            appGroupPermissions: ["view_pii", "manage_tags", "export_user_data"],
            team: [{ teamName: "Growth", teamPermissions: ["send_campaigns_canvases"] }],
          },
        ],
      }),
    );
    expect(res.status).toBe(201);
    const [ws] = (await c.scim("GET", `/scim/v2/Users/${res.body.id}`)).body.permissions.appGroup;
    expect(ws.appGroupPermissions).toEqual(["view_pii", "view_tags", "edit_tags", "delete_tags", "export_user_data"]);
    expect(ws.team[0].teamPermissions).toEqual(["launch_campaigns", "launch_canvases"]);
  });

  it("rename by identifier shows in every user's later GET, the identifiers unchanged; unknown id 404, a taken name 409", async () => {
    const body = user("ada@example.com", {
      roles: [{ roleName: "Marketer – Fashion Brands" }],
      appGroup: [
        {
          appGroupName: "EU Production",
          appGroupPermissionSets: [{ appGroupPermissionSetName: "Marketers" }],
          team: [{ teamName: "Growth" }],
        },
      ],
    });
    const ada = (await c.scim("POST", "/scim/v2/Users", body)).body;
    const bob = (await c.scim("POST", "/scim/v2/Users", { ...body, userName: "bob@example.com" })).body;
    const [ws] = ada.permissions.appGroup;
    const renames = [
      { kind: "workspace", id: ws.appGroupId, name: "EU Prod (renamed)" },
      { kind: "team", id: ws.team[0].teamId, name: "Growth EMEA" },
      { kind: "role", id: ada.permissions.roles[0].roleId, name: "Marketer" },
      { kind: "permissionSet", id: ws.appGroupPermissionSets[0].appGroupPermissionSetId, name: "Marketing" },
    ];
    for (const rename of renames) expect((await c.control("POST", "/rename", rename)).body).toEqual(rename);
    for (const account of [ada, bob]) {
      const now = (await c.scim("GET", `/scim/v2/Users/${account.id}`)).body.permissions;
      expect(now.roles).toEqual([{ roleName: "Marketer", roleId: ada.permissions.roles[0].roleId }]);
      expect(now.appGroup[0]).toMatchObject({
        appGroupId: ws.appGroupId,
        appGroupName: "EU Prod (renamed)",
        appGroupPermissionSets: [{ appGroupPermissionSetName: "Marketing", appGroupPermissionSetId: renames[3]!.id }],
        team: [{ teamId: ws.team[0].teamId, teamName: "Growth EMEA", teamPermissions: [] }],
      });
    }
    // The new name writes to the same workspace; the old one is free again (and would create one).
    const again = await c.scim("PUT", `/scim/v2/Users/${bob.id}`, {
      ...body,
      userName: "bob@example.com",
      permissions: { roles: [], appGroup: [{ appGroupName: "EU Prod (renamed)" }] },
    });
    expect(again.body.permissions.appGroup[0].appGroupId).toBe(ws.appGroupId);
    expect((await c.control("POST", "/rename", { kind: "role", id: "nope", name: "x" })).status).toBe(404);
    await c.control("POST", "/fixtures", { workspaces: [{ name: "Other" }] });
    expect((await c.control("POST", "/rename", { kind: "workspace", id: ws.appGroupId, name: "Other" })).status).toBe(
      409,
    );
    expect((await c.control("POST", "/rename", { kind: "group", id: ws.appGroupId, name: "x" })).status).toBe(400);
  });

  it("fixtures take ids when given, and a clash with the directory is 400 that loads nothing", async () => {
    const id = "6a0f6a53-1d7e-4c1f-9f59-2b8a1c0de001";
    const loaded = await c.control("POST", "/fixtures", {
      workspaces: [{ name: "US Production", id, teams: [{ name: "Retention" }] }],
      permissionSets: [{ name: "Developers", permissions: ["view_api_keys"] }],
    });
    expect(loaded.body).toMatchObject({ workspaces: 3, roles: 1, permissionSets: 2 });
    expect((await directory()).workspaces.find((w: { id: string }) => w.id === id).teams[0].id).toMatch(UUID);
    const clash = await c.control("POST", "/fixtures", {
      permissionSets: [{ name: "Ops", permissions: [] }],
      workspaces: [{ name: "Renamed US", id }],
    });
    expect([clash.status, clash.body.message]).toEqual([400, expect.stringContaining(`workspace id "${id}"`)]);
    expect((await directory()).permissionSets).toHaveLength(2);
    expect((await c.control("POST", "/fixtures", { roles: [{ roleName: "" }] })).status).toBe(400);
    const twoTeamsOneId = await c.control("POST", "/fixtures", {
      workspaces: [
        { name: "A", teams: [{ name: "t", id: "T1" }] },
        { name: "B", teams: [{ name: "u", id: "T1" }] },
      ],
    });
    expect([twoTeamsOneId.status, twoTeamsOneId.body.message]).toEqual([400, 'team id "T1" is given to two teams']);
  });

  it("the SCIM journal's permissionsAfter and GET /_emulator/state show the granular answers", async () => {
    const created = await c.scim(
      "POST",
      "/scim/v2/Users",
      user("journal@example.com", { appGroup: [{ appGroupName: "EU Production", appGroupPermissions: ["view_pii"] }] }),
    );
    const entry = c.emulator.state.scimJournal!.findLast((e) => e.userName === "journal@example.com")!;
    await expect.poll(() => entry.status).toBe(201);
    expect(entry.permissionsAfter).toEqual(created.body.permissions);
    const state = (await c.control("GET", "/state")).body;
    expect(state.permissions).toEqual({ model: "granular", legacy: "accepted" });
    expect(state.dashboardUsers).toEqual([created.body]);
  });
});

describe("the granular model with legacy strings refused (granular-strict)", () => {
  let c: Client;
  beforeAll(async () => {
    c = await startClient({ permissions: "granular-strict" });
  });
  afterAll(() => c.close());

  it("a legacy-only string at workspace or team level is a 400 SCIM error naming the value and where it was", async () => {
    expect((await c.control("GET", "/permissions")).body).toEqual({ model: "granular", legacy: "refused" });
    const workspace = await c.scim(
      "POST",
      "/scim/v2/Users",
      user("ada@example.com", { appGroup: [{ appGroupName: "EU Production", appGroupPermissions: ["basic_access"] }] }),
    );
    expect(workspace.status).toBe(400);
    expect(workspace.body).toEqual({
      schemas: [SCIM_ERROR],
      detail:
        'Legacy permission "basic_access" is no longer accepted: use granular permissions (appGroup "EU Production")',
      status: 400,
      scimType: "invalidValue",
    });
    const team = await c.scim(
      "POST",
      "/scim/v2/Users",
      user("ada@example.com", {
        appGroup: [
          { appGroupName: "EU Production", team: [{ teamName: "Growth", teamPermissions: ["publish_cards"] }] },
        ],
      }),
    );
    expect(team.body.detail).toBe(
      'Legacy permission "publish_cards" is no longer accepted: use granular permissions (appGroup "EU Production", team "Growth")',
    );
    expect(
      (await c.scim("GET", `/scim/v2/Users?filter=${encodeURIComponent('userName eq "ada@example.com"')}`)).body
        .totalResults,
    ).toBe(0);
  });

  it("granular strings, the ones spelled like legacy strings and the emulator's own, are accepted", async () => {
    const res = await c.scim(
      "POST",
      "/scim/v2/Users",
      user("bob@example.com", {
        appGroup: [
          {
            appGroupName: "EU Production",
            appGroupPermissions: ["admin", "edit_segments", "export_user_data", "approve_campaigns"],
          },
        ],
      }),
    );
    expect(res.status).toBe(201);
    expect(res.body.permissions.appGroup[0].appGroupPermissions).toEqual([
      "admin",
      "edit_segments",
      "export_user_data",
      "approve_campaigns",
    ]);
  });
});

describe("choosing the model: --permissions and EMULATOR_PERMISSIONS", () => {
  it("EMULATOR_PERMISSIONS defaults to granular-strict and takes the three models", () => {
    expect(loadEnv({}).EMULATOR_PERMISSIONS).toBe("granular-strict");
    for (const model of ["legacy", "granular", "granular-strict"])
      expect(loadEnv({ EMULATOR_PERMISSIONS: model }).EMULATOR_PERMISSIONS).toBe(model);
  });

  it("a bad EMULATOR_PERMISSIONS is a ConfigError naming the allowed values", () => {
    let error: unknown;
    try {
      loadEnv({ EMULATOR_PERMISSIONS: "granular-ish" });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problem = (error as ConfigError).problems.join("\n");
    expect(problem).toContain("EMULATOR_PERMISSIONS");
    for (const model of ['"legacy"', '"granular"', '"granular-strict"']) expect(problem).toContain(model);
  });

  it("--permissions wins over EMULATOR_PERMISSIONS; a bad flag is a ConfigError naming the allowed values", () => {
    const env = loadEnv({ EMULATOR_PERMISSIONS: "granular" });
    expect(emulatorCommandOptions(env, []).permissions).toBe("granular");
    expect(emulatorCommandOptions(env, ["--permissions", "legacy"]).permissions).toBe("legacy");
    expect(emulatorCommandOptions(loadEnv({}), ["--port", "0"]).permissions).toBe("granular-strict");
    expect(() => emulatorPermissions(env, "strict")).toThrow(ConfigError);
    expect(() => emulatorPermissions(env, "strict")).toThrow(/legacy, granular, granular-strict/);
  });

  it("an emulator started from the command's options is in that model", async () => {
    const c = await startClient(emulatorCommandOptions(loadEnv({}), ["--port", "0"]));
    try {
      expect((await c.control("GET", "/permissions")).body).toEqual({ model: "granular", legacy: "refused" });
    } finally {
      await c.close();
    }
  });
});

describe("the emulator's translation (pure)", () => {
  it.each([
    ["Approve Campaigns", "approve_campaigns"],
    ["Export User Data", "export_user_data"],
    ["View Push TTL", "view_push_ttl"],
    ["Delete Internal Groups", "delete_internal_groups"],
  ])("the emulator's SCIM string for %s is %s", (display, scim) => {
    expect(inventedScimString(display)).toBe(scim);
  });

  it.each([
    [["basic_access", "edit_segments"], [...BASIC_ACCESS_GRANULAR, "archive_segments"], []],
    [["admin", "publish_cards", "manage_approval_settings"], ["admin"], ["publish_cards", "manage_approval_settings"]],
    [["export_user_data", "not_a_published_string"], ["export_user_data", "not_a_published_string"], []],
  ])("the migration of %j is %j, dropping %j", (legacy, granular, dropped) => {
    expect(migratedPermissions(legacy)).toEqual({ permissions: granular, dropped });
  });

  it.each([
    [["edit_segments"], ["edit_segments"]],
    [["export_user_data"], ["export_user_data"]],
    [["dev_console"], expect.arrayContaining(["view_api_keys", "delete_internal_groups", "edit_sdk_debugger"])],
    [
      ["view_pii", "view_pii"],
      ["view_pii", "view_pii"],
    ],
  ])("a granular write accepting legacy reads %j as %j", (given, stored) => {
    expect(acceptedLegacyPermissions(given).permissions).toEqual(stored);
  });
});
