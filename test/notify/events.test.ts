import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/clock.js";
import { nextUtcMidnight } from "../../src/reconcile/budget.js";
import { idp, startStack, type Stack } from "../support/stack.js";
import { startHttpReceiver, type HttpReceiver } from "../support/receivers.js";

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
    stack = await startStack({ clock, workers: false, env: { PLATFORM_SCIM_DAILY_BUDGET: "5", NOTIFY_WEBHOOK_URL: `${receiver.url}/webhook` } });
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
      await scim.patch(`/Groups/${groups.body.Resources[0].id}`, [{ op: "add", path: "members", value: ids.map((value) => ({ value })) }]);
    });
  };

  it("is sent once per window, with used, backlog and ETA", async () => {
    await addUsers("first", 7);
    await drain();
    await drain(); // refused again: same window, same incident
    await flush();
    const [exhausted, ...more] = receiver.ofEvent("budget.exhausted");
    expect(more).toEqual([]);
    expect(exhausted!.json.details).toEqual({ used: 4, limit: 5, backlog: 3, eta: nextUtcMidnight(clock.now()).toISOString() });

    clock.advance(nextUtcMidnight(clock.now()).getTime() - clock.now().getTime() + 60_000);
    await addUsers("second", 4);
    await drain();
    await flush();
    const all = receiver.ofEvent("budget.exhausted");
    expect(all).toHaveLength(2);
    expect(all[1]!.json.id).not.toBe(all[0]!.json.id);
  });
});
