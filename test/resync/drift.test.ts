import { randomUUID } from "node:crypto";
import request from "supertest";
import { afterEach, describe, expect, it } from "vitest";
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
import { seedTwoMarketers, tamperBehindConnector } from "../support/drift.js";
import {
  countPendingVerifications,
  finishVerifiedRun,
  insertRun,
  queueVerifications,
  setRunPhase,
} from "../../src/db/reconcile/resyncRepository.js";

async function resync(stack: Stack, body: object): Promise<Record<string, any>> {
  const started = await request(stack.service.url)
    .post("/admin/api/resync")
    .set("Authorization", `Bearer ${ADMIN_TOKEN}`)
    .send(body);
  expect(started.status).toBe(202);
  return eventually("the run to finish", async () => {
    const run = await adminApi(stack)(`/runs/${started.body.runId}`);
    return run.body.status !== "running" && (run.body as Record<string, any>);
  });
}

describe("full resync: drift verification", () => {
  let stack: Stack | undefined;
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  it("with drift: enforce, finds edited and deleted accounts and puts back what was applied", async () => {
    stack = await startStack({ env: { SCHEDULER_TICK_MS: "100" } });
    await seedTwoMarketers(stack);
    await tamperBehindConnector(stack);
    const run = await resync(stack, { verify: true });
    expect(run).toMatchObject({
      status: "succeeded",
      progress: { usersEvaluated: 2, verifyTotal: 2, verified: 2, drifted: 2 },
    });
    await waitForQueueIdle(stack);

    const { dashboardUsers } = await emulatorState(stack);
    expect(dashboardUsers.map((u) => u.userName).sort()).toEqual(["ann@example.com", "bob@example.com"]);
    for (const user of dashboardUsers) {
      expect(user.permissions.companyPermissions).toEqual([]);
      expect(user.permissions.appGroup[0]!.appGroupName).toBe("EU Production");
    }
    const drift = await adminApi(stack)("/log?action=drift");
    expect(drift.body.entries).toHaveLength(2);
    expect(drift.body.entries.every((e: { outcome: string }) => e.outcome === "enforced")).toBe(true);
    const annDrift = drift.body.entries.find((e: { userName: string }) => e.userName === "ann@example.com");
    expect(annDrift.changes).toContainEqual({
      kind: "permissions",
      path: "companyPermissions",
      added: ["admin"],
      removed: [],
    });
  });

  it("with drift: report, logs the drift and changes nothing", async () => {
    stack = await startStack({ env: { SCHEDULER_TICK_MS: "100", RESYNC_DRIFT: "report" } });
    await seedTwoMarketers(stack);
    await tamperBehindConnector(stack);
    const callsBefore = (await emulatorStats(stack)).scimDaily.used;
    const run = await resync(stack, { verify: true });
    expect(run).toMatchObject({ status: "succeeded", progress: { verified: 2, drifted: 2, callsSpent: 2 } });
    await waitForQueueIdle(stack);
    expect((await emulatorStats(stack)).scimDaily.used).toBe(callsBefore + 2); // the two GETs, nothing else
    const { dashboardUsers } = await emulatorState(stack);
    expect(dashboardUsers.map((u) => u.userName)).toEqual(["ann@example.com"]);
    const drift = await adminApi(stack)("/log?action=drift");
    expect(drift.body.entries.map((e: { outcome: string }) => e.outcome)).toEqual(["reported", "reported"]);
  });

  it("a run closes once, when its last verification is counted, with the counts that verification left", async () => {
    // No scheduler: the test closes the run itself, where the scheduler would.
    stack = await startStack({ env: { ROLES: "web,worker" } });
    const { ann, bob } = await seedTwoMarketers(stack);
    await tamperBehindConnector(stack);
    const { db } = stack.database;
    const runId = randomUUID();
    const pendingClose = await db.transaction(async (tx) => {
      await insertRun(tx, {
        id: runId,
        dryRun: false,
        verify: true,
        trigger: "api",
        actor: null,
        startedAt: new Date(),
        owner: "test",
        usersTotal: 2,
      });
      await setRunPhase(tx, runId, "verify", { verifyTotal: 2 });
      expect(await queueVerifications(tx, runId, [ann, bob])).toBe(2);
      return finishVerifiedRun(tx, runId, new Date());
    });
    expect(pendingClose).toBeUndefined(); // two verifications wait: the run stays open

    await eventually("both verifications counted", async () => (await countPendingVerifications(db, runId)) === 0);
    expect(await finishVerifiedRun(db, runId, new Date())).toMatchObject({ id: runId, verified: 2, drifted: 2 });
    expect(await finishVerifiedRun(db, runId, new Date())).toBeUndefined(); // closed once
  });

  it("a dry run reports what would change and what it would cost, and spends nothing", async () => {
    stack = await startStack({ env: { SCHEDULER_TICK_MS: "100" }, workers: false });
    const scim = idp(stack);
    const ids = [
      await scim.createUser("c1@example.com"),
      await scim.createUser("c2@example.com"),
      await scim.createUser("c3@example.com"),
    ];
    await scim.createGroup("Platform Admins", ids);
    await stack.database.db.query(`DELETE FROM reconcile_queue`);
    const run = await resync(stack, { dryRun: true, verify: true });
    expect(run).toMatchObject({
      status: "succeeded",
      dryRun: true,
      plan: { create: 3, calls: 3 },
      progress: { usersQueued: 3, callsSpent: 0 },
    });
    const [{ n }] = await stack.database.db.query(`SELECT count(*)::int AS n FROM reconcile_queue`);
    expect(n).toBe(0);
    expect((await emulatorStats(stack)).scimDaily.used).toBe(0);
  });

  it("a live (non-dry) resync queues the differences it finds, which the workers then apply", async () => {
    stack = await startStack({ env: { SCHEDULER_TICK_MS: "100" }, workers: false });
    const scim = idp(stack);
    const ids = [await scim.createUser("d1@example.com"), await scim.createUser("d2@example.com")];
    await scim.createGroup("Platform Admins", ids);
    await stack.database.db.query(`DELETE FROM reconcile_queue`); // as if the marks were lost
    const run = await resync(stack, {});
    expect(run).toMatchObject({ status: "succeeded", progress: { usersQueued: 2 } });
    await stack.service.reconciliation!.worker.start();
    await waitForQueueIdle(stack);
    expect((await emulatorState(stack)).dashboardUsers).toHaveLength(2);
    const second = await request(stack.service.url)
      .post("/admin/api/resync")
      .set("Authorization", `Bearer ${ADMIN_TOKEN}`)
      .send({ dryRun: "yes" });
    expect(second.status).toBe(400);
  });
});
