import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { emulatorState, idp, startStack, type Stack } from "../support/stack.js";
import { waitForQueueIdle } from "../support/queue.js";

/**
 * A burst of IdP changes is classified once: one of the worker's loops reads and plans the
 * unclassified rows while the others wait for it and then claim, instead of every loop reading
 * and re-planning the same batch (src/reconcile/worker.ts `classify`).
 */

const USERS = 40;

describe("a burst wakes one classifier", () => {
  let stack: Stack;

  beforeAll(async () => {
    // Four loops, started only once the whole burst is queued, so all four race for it.
    stack = await startStack({ env: { RECONCILE_WORKERS: "4" }, workers: false });
  });

  afterAll(async () => {
    await stack?.close();
  });

  it("with four loops, each user of a 40-user burst is planned once to file it and once to apply it", async () => {
    const client = idp(stack);
    const ids: string[] = [];
    for (let i = 0; i < USERS; i++) ids.push(await client.createUser(`burst${i}@example.com`));
    await client.createGroup("Marketing", ids);

    const { reconciler, worker } = stack.service.reconciliation!;
    const plans = vi.spyOn(reconciler, "plan");
    const reconciles = vi.spyOn(reconciler, "reconcile");
    await worker.start();
    await waitForQueueIdle(stack);
    await worker.stop();

    // Every user got an account: the burst was worked, not only classified.
    const accounts = (await emulatorState(stack)).dashboardUsers.filter((u) => u.userName.startsWith("burst"));
    expect(accounts).toHaveLength(USERS);
    expect(reconciles).toHaveBeenCalledTimes(USERS);
    // Each reconcile plans once as it starts; everything else is classification: once per user.
    const classifications = plans.mock.calls.length - reconciles.mock.calls.length;
    expect(classifications).toBe(USERS);
    const planned = plans.mock.calls.map(([userId]) => userId);
    for (const id of ids) expect(planned.filter((p) => p === id)).toHaveLength(2);
  });
});
