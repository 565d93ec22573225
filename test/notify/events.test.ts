import request from "supertest";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ManualClock } from "../../src/clock.js";
import { createRun, runPlanPhase } from "../../src/jobs/resync.js";
import { nextUtcMidnight } from "../../src/reconcile/budget/budget.js";
import { ADMIN_TOKEN, idp, startStack, type Stack } from "../support/stack.js";
import { startHttpReceiver, type HttpReceiver } from "../support/receivers.js";
import { seedTwoMarketers, tamperBehindConnector } from "../support/drift.js";

/**
 * budget.exhausted: written in the transaction of the refused debit, at most once per budget
 * window (PLATFORM_SCIM_DAILY_BUDGET=5, reserve 1: four creates a day); the next window's
 * exhaustion is a new incident. The clock is moved past midnight, not waited for.
 */
describe("budget.exhausted", () => {
  let stack: Stack;
  let receiver: HttpReceiver;
  const clock = new ManualClock();

  beforeAll(async () => {
    receiver = await startHttpReceiver();
    stack = await startStack({
      clock,
      workers: false,
      env: { PLATFORM_SCIM_DAILY_BUDGET: "5", NOTIFY_WEBHOOK_URL: `${receiver.url}/webhook` },
    });
  });
  afterAll(async () => {
    await stack?.close();
    await receiver?.close();
  });

  const drain = async () => {
    while (await stack.service.reconciliation!.worker.runOnce());
  };
  const flush = async () => {
    while ((await stack.service.notifications.deliverer.cycle()) > 0);
  };
  const addUsers = async (prefix: string, n: number) => {
    const scim = idp(stack);
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push(await scim.createUser(`${prefix}${i}@example.com`));
    await scim.createGroup(`Marketing`, ids).catch(async () => {
      // the group exists from the first window: add the members instead
      const groups = await scim.send("get", `/Groups?filter=${encodeURIComponent('displayName eq "Marketing"')}`);
      await scim.patch(`/Groups/${groups.body.Resources[0].id}`, [
        { op: "add", path: "members", value: ids.map((value) => ({ value })) },
      ]);
    });
  };

  it("is sent once per window, with used, backlog and ETA", async () => {
    await addUsers("first", 7);
    await drain();
    await drain(); // refused again: same window, same incident
    await flush();
    const [exhausted, ...more] = receiver.ofEvent("budget.exhausted");
    expect(more).toEqual([]);
    expect(exhausted!.json.details).toEqual({
      used: 4,
      limit: 5,
      backlog: 3,
      reductionsWaiting: 0,
      reserveSpent: false,
      eta: nextUtcMidnight(clock.now()).toISOString(),
    });

    clock.advance(nextUtcMidnight(clock.now()).getTime() - clock.now().getTime() + 60_000);
    await addUsers("second", 4);
    await drain();
    await flush();
    const all = receiver.ofEvent("budget.exhausted");
    expect(all).toHaveLength(2);
    expect(all[1]!.json.id).not.toBe(all[0]!.json.id);
  });
});

/**
 * drift.found, written when the scheduler closes a verifying run; resync.failed, written with the
 * failed run. Someone edits one account in the platform and deletes another behind the
 * connector's back; a verifying resync finds both.
 */
describe("drift.found and resync.failed", () => {
  let stack: Stack;
  let receiver: HttpReceiver;

  beforeAll(async () => {
    receiver = await startHttpReceiver();
    stack = await startStack({
      env: {
        SCHEDULER_TICK_MS: "100",
        NOTIFY_WEBHOOK_URL: `${receiver.url}/webhook`,
        PUBLIC_URL: "https://scim.example.com",
      },
    });
  });
  afterAll(async () => {
    await stack?.close();
    await receiver?.close();
  });

  it("a verifying resync that corrects two accounts gives one drift.found naming them", async () => {
    await seedTwoMarketers(stack);
    await tamperBehindConnector(stack);

    const started = await request(stack.service.url)
      .post("/admin/api/resync")
      .set("Authorization", `Bearer ${ADMIN_TOKEN}`)
      .send({ verify: true });
    expect(started.status).toBe(202);
    await vi.waitFor(() => expect(receiver.ofEvent("drift.found")).toHaveLength(1), { timeout: 30_000, interval: 100 });
    const [drift] = receiver.ofEvent("drift.found");
    expect(drift!.json.details).toEqual({
      runId: started.body.runId,
      drifted: 2,
      verified: 2,
      firstUsers: expect.arrayContaining(["ann@example.com", "bob@example.com"]),
    });
    expect(drift!.json.url).toBe("https://scim.example.com/admin/runs");
  });

  it("a resync whose planning fails gives resync.failed with the error", async () => {
    const deps = {
      db: stack.database.db,
      clock: { now: () => new Date() },
      policies: { onEmailChange: "hold" as const },
      desired: new Proxy(stack.service.desired, {
        // The resync plans with the mapping in force (DesiredAccess.inForce).
        get: (target, name) =>
          name === "inForce" ? () => Promise.reject(new Error("mapping unreadable")) : Reflect.get(target, name),
      }),
    };
    const runId = await createRun(deps, { dryRun: false, verify: false, trigger: "api", actor: "test" });
    await expect(runPlanPhase(deps, runId)).rejects.toThrow("mapping unreadable");
    await vi.waitFor(() => expect(receiver.ofEvent("resync.failed")).toHaveLength(1), {
      timeout: 10_000,
      interval: 50,
    });
    expect(receiver.ofEvent("resync.failed")[0]!.json.details).toEqual({ runId, error: "mapping unreadable" });
  });
});
