import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/clock.js";
import { addFault } from "../support/emulator.js";
import { adminApi, idp, startStack, type Stack } from "../support/stack.js";
import { accountsNamed, requestsTo } from "./helpers.js";

/**
 * When the platform refuses an account with no permissions (a 4xx to the strip), the connector
 * deletes it at once and says so in the log (docs/reconciler.md, "Strip now, delete later"). The
 * emulator's faults make the strip's PUT on that one account answer 400 once.
 */

const SETTLE_MS = 5_000;
const GRACE_MS = 3_600_000;

describe("a strip the platform refuses", () => {
  let stack: Stack;
  let clock: ManualClock;
  const drain = async () => {
    while (await stack.service.reconciliation!.worker.runOnce());
  };
  beforeAll(async () => {
    clock = new ManualClock();
    stack = await startStack({
      clock,
      workers: false,
      env: { RECONCILE_SETTLE_MS: String(SETTLE_MS), RECONCILE_DEPROVISION_GRACE_MS: String(GRACE_MS) },
    });
  });
  afterAll(async () => stack?.close());

  it("falls back to a DELETE at once, logged in words", async () => {
    const marketing = await idp(stack).createGroup("Marketing");
    const id = await idp(stack).createUser("refused@example.com");
    await idp(stack).patch(`/Groups/${marketing}`, [{ op: "add", path: "members", value: [{ value: id }] }]);
    await drain();
    clock.advance(SETTLE_MS);
    await drain();
    const [account] = await accountsNamed(stack, "refused@example.com");
    expect(account).toBeDefined();
    // The next PUT on this account, the strip, answers 400 once.
    await addFault(stack.emulator.url, { method: "PUT", path: `/scim/v2/Users/${account!.id}`, status: 400, count: 1 });
    const deletesBefore = await requestsTo(stack, "DELETE /scim/v2/Users/{id}");

    await idp(stack).patch(`/Users/${id}`, [{ op: "replace", value: { active: false } }]);
    await drain(); // no clock move: not after the grace, at once

    expect(await accountsNamed(stack, "refused@example.com")).toEqual([]);
    expect(await requestsTo(stack, "DELETE /scim/v2/Users/{id}")).toBe(deletesBefore + 1);
    const entries = (
      (await adminApi(stack)(`/log?user=${encodeURIComponent("refused@example.com")}&limit=100`)).body.entries as {
        action: string;
        outcome: string;
        error: string | null;
      }[]
    ).reverse();
    expect(entries.slice(-2)).toMatchObject([
      {
        action: "update",
        outcome: "failed",
        error: expect.stringMatching(
          /^the platform refused an account with no permissions \(400: .*\); deleting it at once instead$/,
        ),
      },
      { action: "deprovision", outcome: "succeeded" },
    ]);
    expect((await adminApi(stack)("/queue")).body.pendingDeletes).toEqual({ count: 0, nextAt: null });
  });
});
