import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_TOKEN } from "../support/constants.js";
import { ledgerDebits } from "../support/emulator.js";
import { eventually } from "../support/wait.js";
import {
  adminApi,
  emulatorState,
  idp,
  importEmulatorReport,
  startStack,
  waitForQueueIdle,
  type Stack,
} from "../support/stack.js";
import { MARKETING_WORKSPACE, requestsTo } from "../reconcile/helpers.js";

/**
 * PLATFORM_OUTSIDE_CHANGES=report (issue 44, section 3): a permission granted in the platform's
 * dashboard is kept, and put in the next campaign as an item of its own saying who granted it
 * there and when; a revoke puts the mapping back (one PUT, one debit), a keep leaves it.
 */

type Item = {
  id: string;
  userName: string;
  scope: string;
  permission: string;
  origin: string | null;
  rules: unknown[];
};

describe("a grant made in the dashboard, kept, in the next campaign", () => {
  let stack: Stack;
  let items: Item[];
  let campaignId: string;
  const post = (path: string, body: object = {}) =>
    request(stack.service.url).post(`/admin/api${path}`).set("Authorization", `Bearer ${ADMIN_TOKEN}`).send(body);
  const ann = async () => (await emulatorState(stack)).dashboardUsers.find((u) => u.userName === "ann@example.com")!;
  const outsideRow = async () =>
    (await stack.service.db.query(`SELECT granted FROM platform_outside_changes`)) as { granted: unknown }[];

  beforeAll(async () => {
    stack = await startStack({ env: { PLATFORM_OUTSIDE_CHANGES: "report" } });
    const scim = idp(stack);
    await scim.createGroup("Marketing", [await scim.createUser("ann@example.com")]);
    await eventually("ann's account is on the platform", async () =>
      (await emulatorState(stack)).dashboardUsers.some((u) => u.userName === "ann@example.com"),
    );
    await waitForQueueIdle(stack.service.db);
    const granted = await request(stack.emulator.url)
      .post("/_emulator/dashboard")
      .send({
        action: "update-permissions",
        email: "ann@example.com",
        actor: "ops-admin@example.com",
        permissions: { companyPermissions: ["admin"], appGroup: [MARKETING_WORKSPACE] },
      });
    expect(granted.status, granted.text).toBe(204);
    const imported = await importEmulatorReport(stack);
    expect(imported.status, imported.text).toBe(200);
    await eventually("the change is read and kept", async () => (await outsideRow()).length === 1);
    await waitForQueueIdle(stack.service.db);
    expect((await ann()).permissions.companyPermissions).toEqual(["admin"]);
  }, 120_000);
  afterAll(() => stack?.close());

  it("puts the kept grant in the next campaign, once, saying who granted it in the dashboard", async () => {
    const started = await post("/campaigns", {
      name: "Q4",
      scope: { kind: "workspace", workspace: "nowhere" },
      dueAt: new Date(Date.now() + 86_400_000).toISOString(),
      fallbackReviewer: "security@example.com",
    });
    expect(started.status, started.text).toBe(201);
    campaignId = started.body.id as string;
    items = (await adminApi(stack)(`/campaigns/${campaignId}/items?as=security@example.com`)).body.items as Item[];
    // Whatever the campaign's scope: the dashboard's grant is reviewed (its workspace's grants are not in this one).
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ userName: "ann@example.com", scope: "company", permission: "admin", rules: [] });
    expect(items[0]!.origin).toMatch(/^granted in the dashboard by ops-admin@example\.com at \d{4}-/);

    const everything = await post("/campaigns", {
      name: "Everything",
      scope: { kind: "everything" },
      dueAt: new Date(Date.now() + 86_400_000).toISOString(),
      fallbackReviewer: "security@example.com",
    });
    const all = (await adminApi(stack)(`/campaigns/${everything.body.id}/items?as=security@example.com`)).body
      .items as Item[];
    const admins = all.filter((i) => i.permission === "admin");
    expect(admins).toHaveLength(1);
    expect(admins[0]!.origin).toContain("granted in the dashboard by ops-admin@example.com");
  });

  it("puts the mapping back on a revoke: one PUT, one debit, and the change is no longer kept", async () => {
    const before = {
      put: await requestsTo(stack, "PUT /scim/v2/Users/{id}"),
      ledger: await ledgerDebits(stack.service.db),
    };
    const revoked = await post(`/campaigns/${campaignId}/decisions`, {
      as: "security@example.com",
      items: [items[0]!.id],
      decision: "revoke",
      comment: "admin is never granted by hand",
    });
    expect(revoked.status, revoked.text).toBe(200);
    await eventually(
      "ann holds the mapping's grants again",
      async () => (await ann()).permissions.companyPermissions.length === 0,
    );
    await waitForQueueIdle(stack.service.db);
    expect({
      put: (await requestsTo(stack, "PUT /scim/v2/Users/{id}")) - before.put,
      ledger: (await ledgerDebits(stack.service.db)) - before.ledger,
    }).toEqual({ put: 1, ledger: 1 });
    expect(await outsideRow()).toEqual([]);
    const log = JSON.stringify((await adminApi(stack)("/log?limit=20")).body);
    expect(log).toContain("(granted in the dashboard by ops-admin@example.com at");
    expect(log).toContain("the mapping's grants are put back");
  });
});
