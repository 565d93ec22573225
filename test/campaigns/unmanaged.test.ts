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
import { requestsTo } from "../reconcile/helpers.js";

/**
 * Accounts made by hand in the platform's dashboard, reviewed in a campaign (issue 44, section 3),
 * through real parts only: the emulator's dashboard adds them, its report is imported, the discovery
 * lane confirms them, an `unmanaged` campaign lists one item per account, and a reviewer strips one
 * (one PUT, one debit), deletes another through the Approvals (one DELETE once approved, none
 * before) and keeps a third (recorded in the chained decisions).
 */

type Item = {
  id: string;
  userId: string;
  userName: string;
  scope: string;
  origin: string | null;
  unmanaged: { addedBy: string; holds: string[] } | null;
};
type Unmanaged = {
  userName: string;
  state: string;
  holds: string[];
  revoked: { removal: string; doneAt: string | null } | null;
};

const ROUTES = ["PUT /scim/v2/Users/{id}", "DELETE /scim/v2/Users/{id}"] as const;

describe("a campaign of the accounts made by hand", () => {
  let stack: Stack;
  let campaignId: string;
  let items: Item[];
  const post = (path: string, body: object = {}) =>
    request(stack.service.url).post(`/admin/api${path}`).set("Authorization", `Bearer ${ADMIN_TOKEN}`).send(body);
  const dashboard = (body: Record<string, unknown>) =>
    request(stack.emulator.url).post("/_emulator/dashboard").send(body);
  const unmanaged = async () =>
    ((await adminApi(stack)("/platform/unmanaged")).body as { accounts: Unmanaged[] }).accounts;
  const onPlatform = async (userName: string) =>
    (await emulatorState(stack)).dashboardUsers.find((u) => u.userName === userName);
  const calls = async () => ({
    put: await requestsTo(stack, ROUTES[0]),
    delete: await requestsTo(stack, ROUTES[1]),
    ledger: await ledgerDebits(stack.service.db),
  });
  const item = (userName: string) => items.find((i) => i.userName === userName)!;

  beforeAll(async () => {
    stack = await startStack();
    const scim = idp(stack);
    await scim.createGroup("Marketing", [await scim.createUser("ann@example.com")]);
    await waitForQueueIdle(stack.service.db);
    for (const email of ["contractor@example.com", "temp@example.com", "intern@example.com"]) {
      const added = await dashboard({
        action: "add-account",
        email,
        actor: "ops-admin@example.com",
        name: { givenName: "Carl", familyName: "Hand" },
        permissions: {
          companyPermissions: [],
          appGroup: [{ appGroupName: "EU Production", appGroupPermissions: ["basic_access"] }],
        },
      });
      expect(added.status, added.text).toBe(201);
    }
    const imported = await importEmulatorReport(stack);
    expect(imported.status, imported.text).toBe(200);
    await eventually(
      "the three accounts are confirmed",
      async () => (await unmanaged()).filter((a) => a.state === "confirmed").length === 3,
    );
    await waitForQueueIdle(stack.service.db);
  }, 120_000);
  afterAll(() => stack?.close());

  it("puts each account made by hand in the campaign as one item, with who made it and what it holds", async () => {
    const started = await post("/campaigns", {
      name: "Hand-made accounts",
      scope: { kind: "unmanaged" },
      dueAt: new Date(Date.now() + 86_400_000).toISOString(),
      fallbackReviewer: "security@example.com",
    });
    expect(started.status, started.text).toBe(201);
    expect(started.body.items).toBe(3);
    campaignId = started.body.id as string;
    items = (await adminApi(stack)(`/campaigns/${campaignId}/items?as=security@example.com`)).body.items as Item[];
    expect(items.map((i) => [i.userName, i.scope])).toEqual([
      ["contractor@example.com", "account"],
      ["intern@example.com", "account"],
      ["temp@example.com", "account"],
    ]);
    expect(item("contractor@example.com")).toMatchObject({
      origin: "account made by hand in the platform's dashboard by ops-admin@example.com, not managed by the IdP",
      unmanaged: { addedBy: "ops-admin@example.com", holds: ["EU Production: basic_access"] },
    });
  });

  it("strips a revoked account with exactly one PUT and one debit, keeping its name", async () => {
    const before = await calls();
    const revoked = await post(`/campaigns/${campaignId}/decisions`, {
      as: "security@example.com",
      items: [item("contractor@example.com").id],
      decision: "revoke",
      comment: "contractor left in June",
      removal: "strip",
    });
    expect(revoked.status, revoked.text).toBe(200);
    await eventually("the contractor is stripped on the platform", async () => {
      const account = await onPlatform("contractor@example.com");
      return account !== undefined && account.permissions.appGroup.length === 0;
    });
    await waitForQueueIdle(stack.service.db);
    const after = await calls();
    expect({
      put: after.put - before.put,
      delete: after.delete - before.delete,
      ledger: after.ledger - before.ledger,
    }).toEqual({ put: 1, delete: 0, ledger: 1 });
    const [debit] = await stack.service.db.query<{ action: string; user_id: string; uses_reserve: boolean }>(
      `SELECT action, user_id, uses_reserve FROM budget_debits ORDER BY id DESC LIMIT 1`,
    );
    expect(debit).toMatchObject({
      action: "strip",
      user_id: item("contractor@example.com").userId,
      uses_reserve: true,
    });
    const account = await onPlatform("contractor@example.com");
    expect(account).toMatchObject({ name: { givenName: "Carl", familyName: "Hand" } });
    expect(account!.permissions.companyPermissions).toEqual([]);
    // Still listed, holding nothing, with the revoke carried out.
    const listed = (await unmanaged()).find((a) => a.userName === "contractor@example.com");
    expect(listed).toMatchObject({ state: "confirmed", holds: [], revoked: { removal: "strip" } });
    expect(listed!.revoked!.doneAt).not.toBeNull();
    const log = JSON.stringify((await adminApi(stack)("/log?limit=20")).body);
    expect(log).toContain("to be stripped (one PUT taking its permissions away)");
    expect(log).toContain("access removed: account made by hand in the platform's dashboard by ops-admin@example.com");
  });

  it("deletes a revoked account only once an admin approves: then exactly one DELETE, and it leaves the list", async () => {
    const accountId = item("temp@example.com").userId;
    const before = await calls();
    const revoked = await post(`/campaigns/${campaignId}/decisions`, {
      as: "security@example.com",
      items: [item("temp@example.com").id],
      decision: "revoke",
      comment: "nobody knows this account",
      removal: "delete",
    });
    expect(revoked.status, revoked.text).toBe(200);
    await eventually("the delete waits for an admin", async () => {
      const holds = (await adminApi(stack)("/approvals")).body.holds as { userId: string; kind: string }[];
      return holds.some((h) => h.userId === accountId && h.kind === "deprovision");
    });
    await waitForQueueIdle(stack.service.db);
    expect(await calls()).toEqual(before);
    expect(await onPlatform("temp@example.com")).toBeDefined();

    const approved = await post(`/approvals/${accountId}/approve`);
    expect(approved.status, approved.text).toBe(200);
    await eventually("the account is deleted on the platform", async () => !(await onPlatform("temp@example.com")));
    await waitForQueueIdle(stack.service.db);
    const after = await calls();
    expect({
      put: after.put - before.put,
      delete: after.delete - before.delete,
      ledger: after.ledger - before.ledger,
    }).toEqual({ put: 0, delete: 1, ledger: 1 });
    expect((await unmanaged()).map((a) => a.userName)).not.toContain("temp@example.com");
  });

  it("records a kept account in the chained decisions, and spends nothing", async () => {
    const before = await calls();
    const kept = await post(`/campaigns/${campaignId}/decisions`, {
      as: "security@example.com",
      items: [item("intern@example.com").id],
      decision: "keep",
      comment: "the intern's test account, until September",
    });
    expect(kept.status, kept.text).toBe(200);
    const decisions = await stack.service.db.query<Record<string, unknown>>(
      `SELECT user_id, user_name, scope, decision, comment, chain_hash FROM campaign_decisions WHERE campaign_id = $1 ORDER BY id`,
      [campaignId],
    );
    expect(decisions.find((d) => d.user_name === "intern@example.com")).toMatchObject({
      user_id: item("intern@example.com").userId,
      scope: "account",
      decision: "keep",
      comment: "the intern's test account, until September",
    });
    await waitForQueueIdle(stack.service.db);
    expect(await calls()).toEqual(before);
    expect((await onPlatform("intern@example.com"))!.permissions.appGroup).toHaveLength(1);
  });

  it("refuses a removal without a revoke, naming it", async () => {
    const res = await post(`/campaigns/${campaignId}/decisions`, {
      items: [item("intern@example.com").id],
      decision: "keep",
      removal: "delete",
    });
    expect(res.status).toBe(400);
    expect(res.text).toContain("removal");
  });
});
