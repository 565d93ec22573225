import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCutProxy, type CutProxy } from "./cutProxy.js";
import { emulatorState, idp, startStack, type Stack } from "../support/stack.js";
import { eventually } from "../support/wait.js";

/**
 * A reconcile claim whose answer is lost: the connection carrying claimNext's UPDATE is cut right
 * after the claim is committed and before the worker reads which row it claimed (a proxy between
 * the connector and PostgreSQL withholds that answer and closes the connection). The lease lives
 * on, so the claim looks alive to every worker: the same process must still reconcile the user,
 * without a restart.
 */

/** Text of claimNext's statement (src/db/reconcile/queueRepository.ts) and of nothing else. */
const CLAIM_NEXT = "ORDER BY priority, source_rank, enqueued_at LIMIT 1 FOR UPDATE SKIP LOCKED";

describe("a reconcile claim committed with its answer lost", () => {
  let stack: Stack;
  let proxy: CutProxy;

  beforeAll(async () => {
    stack = await startStack({
      env: { RECONCILE_WORKERS: "1" },
      route: async (url) => {
        proxy = await startCutProxy(url, CLAIM_NEXT);
        return proxy.url;
      },
    });
  });
  afterAll(async () => {
    await stack?.close();
    await proxy?.close();
  });

  it("the claimed user is reconciled by the same process once the database answers again", async () => {
    const client = idp(stack);
    proxy.arm();
    const userId = await client.createUser("lost-claim@example.com");
    await client.createGroup("Marketing", [userId]);
    await eventually("the claim's connection cut after its commit", async () => proxy.cuts === 1);
    const reconciled = await eventually(
      "the user reconciled after the lost claim",
      async () => {
        const [queued] = await stack.database.db.query(`SELECT count(*)::int AS n FROM reconcile_queue`);
        const account = (await emulatorState(stack)).dashboardUsers.find(
          (u) => u.userName === "lost-claim@example.com",
        );
        return queued.n === 0 && account;
      },
      { timeoutMs: 20_000 },
    );
    expect(reconciled.permissions.appGroup.map((w) => w.appGroupName)).toEqual(["EU Production"]);
    expect(proxy.cuts).toBe(1);
  }, 60_000);
});
