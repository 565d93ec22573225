import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  adminApi,
  emulatorState,
  emulatorStats,
  idp,
  startStack,
  waitForQueueIdle,
  type Stack,
} from "../support/stack.js";

/**
 * IdP pushes (Okta and Entra shapes) → connector → emulator, over real HTTP. The emulator must end
 * holding exactly the expected dashboard users, and spend exactly one SCIM call per real change.
 */
describe("reconcile end to end", () => {
  let stack: Stack;
  beforeAll(async () => {
    // The worker starts after the first burst of pushes, so that burst is coalesced per user.
    stack = await startStack({ workers: false });
  });
  afterAll(async () => stack?.close());

  const scimCalls = async () => (await emulatorStats(stack)).scimDaily.used;

  it("coalesces a burst of pushes: exactly the entitled users, one POST each", async () => {
    const scim = idp(stack);
    const ann = await scim.createUser("ann@example.com");
    const bob = await scim.createUser("bob@example.com", {
      "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": { department: "Finance & Accounting" },
      schemas: [
        "urn:ietf:params:scim:schemas:core:2.0:User",
        "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User",
      ],
    });
    await scim.createUser("carol@example.com"); // in no mapped group: no account
    await scim.createGroup("Marketing", [ann]);
    await scim.createGroup("Platform Admins", [bob]);
    await scim.createGroup("Analysts-EU", [ann]);
    await stack.service.reconciliation!.worker.start();
    await waitForQueueIdle(stack);

    const { dashboardUsers } = await emulatorState(stack);
    expect(dashboardUsers.map((u) => u.userName).sort()).toEqual(["ann@example.com", "bob@example.com"]);
    const annOnPlatform = dashboardUsers.find((u) => u.userName === "ann@example.com")!;
    expect(annOnPlatform.department).toBe("marketing");
    expect(annOnPlatform.permissions.appGroup).toMatchObject([
      {
        appGroupName: "EU Production",
        appGroupPermissions: ["basic_access", "export_user_data", "send_campaigns_canvases"],
        team: [{ teamName: "Lifecycle", teamPermissions: ["basic_access"] }],
      },
    ]);
    const bobOnPlatform = dashboardUsers.find((u) => u.userName === "bob@example.com")!;
    expect(bobOnPlatform.department).toBe("finance");
    expect(bobOnPlatform.permissions.companyPermissions).toEqual(["admin"]);
    expect(await scimCalls()).toBe(2);
  });

  it("repeating the same pushes (Okta's PUT of an unchanged user) spends 0 calls", async () => {
    const before = await scimCalls();
    const scim = idp(stack);
    const list = await scim.send("get", `/Users?filter=${encodeURIComponent('userName eq "ann@example.com"')}`);
    const ann = list.body.Resources[0];
    const { meta: _meta, ...resource } = ann;
    for (let i = 0; i < 3; i++) expect((await scim.send("put", `/Users/${ann.id}`, resource)).status).toBe(200);
    const groups = await scim.send("get", `/Groups?filter=${encodeURIComponent('displayName eq "Marketing"')}`);
    await scim.patch(`/Groups/${groups.body.Resources[0].id}`, [
      { op: "add", path: "members", value: [{ value: ann.id }] },
    ]);
    await waitForQueueIdle(stack);
    expect(await scimCalls()).toBe(before);
  });

  it("a permission change is one PUT; an Entra-style deactivation is one DELETE", async () => {
    const scim = idp(stack);
    const before = await scimCalls();
    const users = await scim.send("get", `/Users?filter=${encodeURIComponent('userName eq "ann@example.com"')}`);
    const annId = users.body.Resources[0].id;
    const analysts = await scim.send("get", `/Groups?filter=${encodeURIComponent('displayName eq "Analysts-EU"')}`);
    await scim.patch(`/Groups/${analysts.body.Resources[0].id}`, [
      { op: "remove", path: `members[value eq "${annId}"]` },
    ]);
    await waitForQueueIdle(stack);
    expect(await scimCalls()).toBe(before + 1);
    let ann = (await emulatorState(stack)).dashboardUsers.find((u) => u.userName === "ann@example.com")!;
    expect(ann.permissions.appGroup[0]!.appGroupPermissions).toEqual(["basic_access", "send_campaigns_canvases"]);

    await scim.patch(`/Users/${annId}`, [{ op: "Replace", path: "active", value: "False" }]);
    await waitForQueueIdle(stack);
    expect(await scimCalls()).toBe(before + 2);
    ann = (await emulatorState(stack)).dashboardUsers.find((u) => u.userName === "ann@example.com")!;
    expect(ann).toBeUndefined();
  });

  it("Okta's path-less replace {active:false} removes access, and the log says why", async () => {
    const scim = idp(stack);
    const users = await scim.send("get", `/Users?filter=${encodeURIComponent('userName eq "bob@example.com"')}`);
    await scim.patch(`/Users/${users.body.Resources[0].id}`, [{ op: "replace", value: { active: false } }]);
    await waitForQueueIdle(stack);
    expect((await emulatorState(stack)).dashboardUsers).toEqual([]);

    const log = await adminApi(stack)("/log?user=bob@example.com&action=deprovision");
    expect(log.status).toBe(200);
    expect(log.body.entries).toHaveLength(1);
    expect(log.body.entries[0]).toMatchObject({
      action: "deprovision",
      outcome: "succeeded",
      callsSpent: 1,
      platformStatus: 204,
      trigger: { kind: "idp" },
    });
    expect(log.body.entries[0].changes).toContainEqual({ kind: "account", old: "present", new: "absent" });
  });

  it("the admin API reports the budget and an empty queue", async () => {
    const budget = await adminApi(stack)("/budget");
    expect(budget.body).toMatchObject({ limit: 5000, reserve: 500, used: await scimCalls() });
    const queue = await adminApi(stack)("/queue");
    expect(queue.body).toMatchObject({ total: 0, eta: null });
    expect((await adminApi(stack)("/budget").set("Authorization", "Bearer wrong")).status).toBe(401);
  });
});
