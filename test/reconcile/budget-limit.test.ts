import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nextUtcMidnight } from "../../src/reconcile/budget/budget.js";
import { adminApi, emulatorState, idp, startStack, waitForQueueIdle, type Stack } from "../support/stack.js";
import { eventually } from "../support/wait.js";
import { scimUsed } from "./helpers.js";

/**
 * PLATFORM_SCIM_DAILY_BUDGET=20 (reserve 10% = 2) and 60 new entitled users: the platform never
 * sees more than 20 SCIM calls, creates stop at 18, a deprovision still goes through on the
 * reserve, and the queue says when the rest will be done.
 */
describe("a small daily budget", () => {
  let stack: Stack;
  let maxSeen = 0;
  let poller: NodeJS.Timeout | undefined;

  beforeAll(async () => {
    stack = await startStack({ env: { PLATFORM_SCIM_DAILY_BUDGET: "20" }, workers: false });
    // Watch the platform's own count for the whole run, not just at the end.
    poller = setInterval(() => {
      void scimUsed(stack).then(
        (used) => (maxSeen = Math.max(maxSeen, used)),
        () => undefined,
      );
    }, 50);
  });
  afterAll(async () => {
    clearInterval(poller);
    await stack?.close();
  });

  const userNames = Array.from({ length: 60 }, (_, i) => `budget${String(i).padStart(2, "0")}@example.com`);

  it("creates 18 of 60 users (the budget minus the reserve) and defers the rest", async () => {
    const scim = idp(stack);
    const ids: string[] = [];
    for (const userName of userNames) ids.push(await scim.createUser(userName));
    await scim.createGroup("Marketing", ids);
    await stack.service.reconciliation!.worker.start();
    await waitForQueueIdle(stack);

    const created = (await emulatorState(stack)).dashboardUsers;
    expect(created).toHaveLength(18);
    expect(await scimUsed(stack)).toBe(18);

    const budget = await adminApi(stack)("/budget");
    expect(budget.body).toMatchObject({ limit: 20, reserve: 2, used: 18, remaining: 0, remainingWithReserve: 2 });

    const deferred = await adminApi(stack)("/log?outcome=deferred-for-budget&limit=1000");
    expect(deferred.body.entries.length).toBeGreaterThanOrEqual(42);
    expect(
      deferred.body.entries.every(
        (e: { action: string; callsSpent: number }) => e.action === "create" && e.callsSpent === 0,
      ),
    ).toBe(true);
  });

  it("the queue reports the deferred creates with an ETA at or after the next UTC midnight", async () => {
    const queue = await adminApi(stack)("/queue");
    expect(queue.status).toBe(200);
    const creates = queue.body.pending.filter((p: { name: string }) => p.name === "create");
    expect(creates.reduce((n: number, p: { count: number }) => n + p.count, 0)).toBe(42);
    expect(creates.every((p: { ready: number }) => p.ready === 0)).toBe(true);
    expect(queue.body.total).toBe(42);
    expect(queue.body.eta).not.toBeNull();
    expect(new Date(queue.body.eta).getTime()).toBeGreaterThanOrEqual(nextUtcMidnight(new Date()).getTime());
  });

  it("a deprovision after the creates ran out of budget still happens, on the reserve", async () => {
    const gone = (await emulatorState(stack)).dashboardUsers[0]!.userName;
    const scim = idp(stack);
    const found = await scim.send("get", `/Users?filter=${encodeURIComponent(`userName eq "${gone}"`)}`);
    await scim.patch(`/Users/${found.body.Resources[0].id}`, [{ op: "replace", value: { active: false } }]);
    await eventually(
      "the deprovision",
      async () => !(await emulatorState(stack)).dashboardUsers.some((u) => u.userName === gone),
      { timeoutMs: 20_000 },
    );

    expect(await scimUsed(stack)).toBe(19);
    const log = await adminApi(stack)(`/log?user=${encodeURIComponent(gone)}&action=deprovision`);
    expect(log.body.entries[0]).toMatchObject({ outcome: "succeeded", callsSpent: 1 });
    const budget = await adminApi(stack)("/budget");
    expect(budget.body).toMatchObject({ used: 19, remaining: 0, remainingWithReserve: 1 });
    // The creates are still waiting for tomorrow's budget, not retried into a refusal.
    await waitForQueueIdle(stack);
    expect((await emulatorState(stack)).dashboardUsers).toHaveLength(17);
    expect(await scimUsed(stack)).toBe(19);
  });

  it("the platform's count never passed 20 at any moment of the run", async () => {
    expect(maxSeen).toBeGreaterThan(0);
    expect(maxSeen).toBeLessThanOrEqual(20);
    expect(await scimUsed(stack)).toBeLessThanOrEqual(20);
  });
});
