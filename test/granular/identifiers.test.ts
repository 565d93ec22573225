import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renamedInUse } from "../../src/admin/mapping/mapping.js";
import { listPlatformIdentifiers } from "../../src/db/platform/identifierRepository.js";
import {
  ADMIN_TOKEN,
  adminApi,
  emulatorState,
  emulatorStats,
  idp,
  startStack,
  waitForQueueIdle,
  type Stack,
} from "../support/stack.js";
import { eventually } from "../support/wait.js";
import { ledgerDebits } from "../support/emulator.js";

/**
 * Roles, permission sets, workspaces and teams named by name and by API identifier, end to end on a
 * granular platform (the emulator, legacy refused): mapping → platform; identifiers learned from
 * the answers; a rename on the platform changes nothing for what is pinned by identifier and is
 * named for what the mapping still names by its old name.
 */

const ROLE_MARKETER = "0b0c5f8e-8d4e-4e1a-9a51-3f2f6f7a0001";
const ROLE_AUDITOR = "0b0c5f8e-8d4e-4e1a-9a51-3f2f6f7a0002";
const SET_DEVELOPERS = "0b0c5f8e-8d4e-4e1a-9a51-3f2f6f7a0003";
const WS_EU = "0b0c5f8e-8d4e-4e1a-9a51-3f2f6f7a0004";
const TEAM_LIFECYCLE = "0b0c5f8e-8d4e-4e1a-9a51-3f2f6f7a0005";

const MAPPING = `permissionModel: granular
department: { default: engineering }
rules:
  - description: Marketing, by names
    group: Marketing
    roles: [Marketer]
    workspaces:
      - name: Staging
        permissionSets: [Developers]
  - description: Auditors, by identifiers
    group: Auditors
    roles: [{ id: ${ROLE_AUDITOR} }]
    workspaces:
      - id: ${WS_EU}
        name: EU Production
        permissions: [view_campaigns, view_canvases]
        teams:
          - id: ${TEAM_LIFECYCLE}
            permissions: [view_campaigns]
  - description: Developers, a set by identifier
    group: Developers
    workspaces:
      - name: Staging
        permissionSets: [{ id: ${SET_DEVELOPERS} }]
`;

describe("roles, permission sets, workspaces and teams by name and by identifier", () => {
  let stack: Stack;
  const fixtures = (body: object) => request(stack.emulator.url).post("/_emulator/fixtures").send(body);
  const rename = (body: object) => request(stack.emulator.url).post("/_emulator/rename").send(body);
  const account = async (userName: string) =>
    (await emulatorState(stack)).dashboardUsers.find((u) => u.userName === userName)!;

  beforeAll(async () => {
    stack = await startStack({
      mapping: MAPPING,
      emulator: { permissions: "granular-strict" },
      env: { SCHEDULER_TICK_MS: "100" },
    });
    const loaded = await fixtures({
      workspaces: [
        { name: "EU Production", id: WS_EU, teams: [{ name: "Lifecycle", id: TEAM_LIFECYCLE }] },
        { name: "Staging" },
      ],
      roles: [
        { roleName: "Marketer", roleId: ROLE_MARKETER },
        { roleName: "Auditor", roleId: ROLE_AUDITOR },
      ],
      permissionSets: [{ name: "Developers", id: SET_DEVELOPERS, permissions: ["view_api_keys"] }],
    });
    expect(loaded.status, loaded.text).toBe(200);
    const api = idp(stack);
    const ann = await api.createUser("ann@example.com");
    const bob = await api.createUser("bob@example.com");
    const cem = await api.createUser("cem@example.com");
    await api.createGroup("Marketing", [ann]);
    await api.createGroup("Auditors", [bob]);
    await api.createGroup("Developers", [cem]);
    await waitForQueueIdle(stack);
  }, 120_000);
  afterAll(async () => stack?.close());

  it("reach the platform: by name where the mapping names, by identifier where it pins", async () => {
    const ann = await account("ann@example.com");
    expect(ann.permissions.roles).toEqual([{ roleName: "Marketer", roleId: ROLE_MARKETER }]);
    expect(ann.permissions.appGroup).toMatchObject([
      {
        appGroupName: "Staging",
        appGroupPermissionSets: [{ appGroupPermissionSetName: "Developers", appGroupPermissionSetId: SET_DEVELOPERS }],
      },
    ]);
    const bob = await account("bob@example.com");
    expect(bob.permissions.roles).toEqual([{ roleName: "Auditor", roleId: ROLE_AUDITOR }]);
    expect(bob.permissions.appGroup).toMatchObject([
      {
        appGroupId: WS_EU,
        appGroupName: "EU Production",
        appGroupPermissions: ["view_campaigns", "view_canvases"],
        team: [{ teamId: TEAM_LIFECYCLE, teamName: "Lifecycle", teamPermissions: ["view_campaigns"] }],
      },
    ]);
    expect((await account("cem@example.com")).permissions.appGroup).toMatchObject([
      { appGroupName: "Staging", appGroupPermissionSets: [{ appGroupPermissionSetId: SET_DEVELOPERS }] },
    ]);
  });

  it("identifiers are learned from the answers, at no cost", async () => {
    const learned = await listPlatformIdentifiers(stack.database.db);
    expect(learned.map((i) => [i.kind, i.name, i.id])).toEqual(
      expect.arrayContaining([
        ["role", "Marketer", ROLE_MARKETER],
        ["role", "Auditor", ROLE_AUDITOR],
        ["permissionSet", "Developers", SET_DEVELOPERS],
        ["workspace", "EU Production", WS_EU],
        ["team", "Lifecycle", TEAM_LIFECYCLE],
      ]),
    );
    expect(learned.find((i) => i.kind === "team")!.workspaceId).toBe(WS_EU);
    // No call of their own: three accounts, three creates, whose answers carried the identifiers,
    // counted on the emulator and in the connector's ledger alike.
    expect((await emulatorStats(stack)).scimDaily.used).toBe(3);
    expect(await ledgerDebits(stack.database.db)).toBe(3);
  });

  it("a rename on the platform: what is pinned by identifier is no drift; a name still used is named", async () => {
    expect((await rename({ kind: "workspace", id: WS_EU, name: "EU Production (EMEA)" })).status).toBe(200);
    expect((await rename({ kind: "role", id: ROLE_MARKETER, name: "Marketer (all brands)" })).status).toBe(200);
    const started = await request(stack.service.url)
      .post("/admin/api/resync")
      .set("Authorization", `Bearer ${ADMIN_TOKEN}`)
      .send({ verify: true });
    expect(started.status).toBe(202);
    const run = await eventually("the verifying run to finish", async () => {
      const r = (await adminApi(stack)(`/runs/${started.body.runId}`)).body as Record<string, any>;
      return r.status !== "running" && r.progress.verified === 3 && r;
    });
    await waitForQueueIdle(stack);
    // bob's workspace is pinned by identifier: no drift. ann's role is named by its old name: drift.
    expect(run.progress.drifted).toBe(1);
    const drift = (await adminApi(stack)("/log?action=drift")).body.entries as { userName: string }[];
    expect(drift.map((e) => e.userName)).toEqual(["ann@example.com"]);

    const learned = await listPlatformIdentifiers(stack.database.db);
    expect(learned.find((i) => i.id === WS_EU)).toMatchObject({
      name: "EU Production (EMEA)",
      previousName: "EU Production",
    });
    const named = renamedInUse(stack.service.mappings.current(), learned);
    expect(named).toEqual([
      expect.stringContaining('role "Marketer" (line 4) was renamed on the platform to "Marketer (all brands)"'),
    ]);
  });
});
