import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildPlanReport, formatPlanReport } from "../../src/cli/reconcile.js";
import { ManualClock } from "../../src/clock.js";
import { ConfigError, loadEnv } from "../../src/config/env.js";
import { freePort } from "../../src/db/embedded.js";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.js";
import { nextUtcMidnight } from "../../src/reconcile/budget/budget.js";
import type { Plan } from "../../src/reconcile/planner.js";
import { END_OF_WINDOW_GUARD_MS, settleDeadline, waitsToSettle } from "../../src/reconcile/settle.js";
import type { ReconcileWorker } from "../../src/reconcile/worker.js";
import { signInLocally } from "../support/adminHarness.js";
import { spawnConnector, type ConnectorProcess } from "../support/connectorProcess.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";
import { ADMIN_TOKEN, adminApi, IDP_TOKEN, idp, startStack, type Stack, writeMappingFile } from "../support/stack.js";
import { emulatorDump } from "../support/emulator.js";
import { eventually } from "../support/wait.js";
import { accountsNamed, idpUserId, requestsTo } from "./helpers.js";

/**
 * The settle window (docs/reconciler.md): grants from the IdP wait until the user has been quiet,
 * so a real IdP's one-request-per-change pacing costs one platform call per user; reductions
 * never wait. The clock is a ManualClock and the worker is driven pass by pass (`runOnce`), so
 * "has not gone out yet" is a fact about the queue, not the absence of a call in a time window.
 */

const POST = "POST /scim/v2/Users";
const PUT = "PUT /scim/v2/Users/{id}";
const DELETE = "DELETE /scim/v2/Users/{id}";
const SETTLE_MS = 5_000;
const SETTLE_MAX_MS = 12_000;

describe("settleDeadline and waitsToSettle (pure)", () => {
  const now = new Date("2026-03-10T12:00:00Z");
  const policy = { settleMs: 5_000, maxMs: 12_000 };
  const at = (ms: number) => new Date(now.getTime() + ms);

  it.each([
    ["a first grant waits the settle window", { burstStartedAt: null }, at(5_000)],
    ["a later change restarts it", { burstStartedAt: at(-4_000) }, at(5_000)],
    ["the cap counts from the burst's first held change", { burstStartedAt: at(-9_000) }, at(3_000)],
    ["past the cap it does not wait", { burstStartedAt: at(-12_000) }, null],
    [
      "near a budget reset it stops in time",
      { burstStartedAt: null, budgetResetsAt: at(12_000) },
      at(12_000 - END_OF_WINDOW_GUARD_MS),
    ],
    [
      "within the guard of a reset it does not wait",
      { burstStartedAt: null, budgetResetsAt: at(END_OF_WINDOW_GUARD_MS) },
      null,
    ],
  ])("%s", (_name, input, expected) => {
    expect(settleDeadline({ now, policy, budgetResetsAt: null, ...input })).toEqual(expected);
  });

  it("is off when the window is 0", () => {
    expect(
      settleDeadline({ now, burstStartedAt: null, policy: { settleMs: 0, maxMs: 0 }, budgetResetsAt: null }),
    ).toBeNull();
  });

  const desired = {
    userName: "a@example.com",
    givenName: "A",
    familyName: "B",
    department: "x",
    companyPermissions: [],
    workspaces: [],
  };
  const idpTrigger = { kind: "idp" } as const;
  const grant: Plan = { action: "update", platformId: "p", desired, changes: [], reduction: false };
  const create: Plan = { action: "create", desired, changes: [] };
  it.each<{
    name: string;
    plan: Plan;
    trigger: Parameters<typeof waitsToSettle>[1];
    verifyRun: string | null;
    waits: boolean;
  }>([
    { name: "a create from the IdP", plan: create, trigger: idpTrigger, verifyRun: null, waits: true },
    { name: "a grant from the IdP", plan: grant, trigger: idpTrigger, verifyRun: null, waits: true },
    { name: "a reduction", plan: { ...grant, reduction: true }, trigger: idpTrigger, verifyRun: null, waits: false },
    {
      name: "a deprovision",
      plan: { action: "deprovision", platformId: "p", changes: [], reason: "no-grace" },
      trigger: idpTrigger,
      verifyRun: null,
      waits: false,
    },
    { name: "a mapping change", plan: create, trigger: { kind: "mapping" }, verifyRun: null, waits: false },
    {
      name: "a resync's phase 1",
      plan: create,
      trigger: { kind: "resync", runId: "r" },
      verifyRun: null,
      waits: false,
    },
    {
      name: "an admin's reconcile now",
      plan: create,
      trigger: { kind: "admin", actor: "ann" },
      verifyRun: null,
      waits: false,
    },
    { name: "a verification row", plan: grant, trigger: idpTrigger, verifyRun: "run-1", waits: false },
  ])("$name → waits: $waits", ({ plan, trigger, verifyRun, waits }) => {
    expect(waitsToSettle(plan, trigger, verifyRun)).toBe(waits);
  });

  it("refuses a cap below the window at boot, with the fix", () => {
    expect(() => loadEnv({ RECONCILE_SETTLE_MS: "30000", RECONCILE_SETTLE_MAX_MS: "10000" })).toThrow(ConfigError);
    expect(() => loadEnv({ RECONCILE_SETTLE_MS: "30000", RECONCILE_SETTLE_MAX_MS: "10000" })).toThrow(
      /RECONCILE_SETTLE_MAX_MS: must be at least RECONCILE_SETTLE_MS/,
    );
    expect(loadEnv({}).RECONCILE_SETTLE_MS).toBeGreaterThan(0);
  });
});

describe("the settle window against the emulator", () => {
  let stack: Stack;
  let clock: ManualClock;
  let worker: ReconcileWorker;
  const groups: Record<string, string> = {};

  beforeAll(async () => {
    clock = new ManualClock();
    stack = await startStack({
      clock,
      workers: false,
      env: { RECONCILE_SETTLE_MS: String(SETTLE_MS), RECONCILE_SETTLE_MAX_MS: String(SETTLE_MAX_MS) },
    });
    worker = stack.service.reconciliation!.worker;
    for (const name of ["Marketing", "Analysts-EU", "Analysts-US", "Platform Admins", "Social"])
      groups[name] = await idp(stack).createGroup(name);
  });
  afterAll(async () => stack?.close());

  /** Every pass the worker can make now: classify, then claim and reconcile what is ready. */
  const drain = async () => {
    while (await worker.runOnce());
  };
  /** The IdP's pace: a few requests a second. */
  const tick = (ms = 333) => clock.advance(ms);
  const calls = async () => ({
    post: await requestsTo(stack, POST),
    put: await requestsTo(stack, PUT),
    del: await requestsTo(stack, DELETE),
  });
  const add = (group: string, userId: string) =>
    idp(stack).patch(`/Groups/${groups[group]}`, [{ op: "add", path: "members", value: [{ value: userId }] }]);
  const remove = (group: string, userId: string) =>
    idp(stack).patch(`/Groups/${groups[group]}`, [{ op: "remove", path: `members[value eq "${userId}"]` }]);
  const settling = async (userId: string): Promise<Date | null> => {
    const rows: { settle_until: Date | null }[] = await stack.database.db.query(
      `SELECT settle_until FROM reconcile_queue WHERE user_id = $1`,
      [userId],
    );
    return rows[0]?.settle_until ?? null;
  };
  const permissionsOf = async (userName: string) => (await accountsNamed(stack, userName))[0]?.permissions;

  /** A user already on the platform in Marketing, the queue drained. */
  async function provisioned(userName: string): Promise<string> {
    const id = await idp(stack).createUser(userName);
    await add("Marketing", id);
    await drain();
    tick(SETTLE_MS);
    await drain();
    expect(await accountsNamed(stack, userName)).toHaveLength(1);
    return id;
  }

  it("Okta's push-groups sequence costs one POST per entitled user", async () => {
    const before = await calls();
    // Users first, with no groups; then each group, empty; then one PATCH per membership.
    const names = Array.from({ length: 6 }, (_, i) => `okta${i}@example.com`);
    const ids: string[] = [];
    for (const name of names) {
      ids.push(await idp(stack).createUser(name));
      tick();
      await drain();
    }
    const memberships: [string, number][] = [
      ["Marketing", 0],
      ["Marketing", 1],
      ["Marketing", 2],
      ["Marketing", 3],
      ["Analysts-EU", 0],
      ["Analysts-EU", 1],
      ["Analysts-EU", 4],
      ["Platform Admins", 0],
      ["Platform Admins", 3],
      ["Social", 5],
    ];
    for (const [group, i] of memberships) {
      await add(group, ids[i]!);
      tick();
      await drain();
    }
    // Everything the IdP sent is classified and waiting to settle; nothing went out yet.
    for (const i of [0, 1, 2, 3, 4]) expect(await settling(ids[i]!)).not.toBeNull();
    expect(await calls()).toEqual(before);

    tick(SETTLE_MS);
    await drain();
    const after = await calls();
    expect(after.post - before.post).toBe(5); // okta5 is only in an unmapped group
    expect(after.put - before.put).toBe(0);
    expect(await accountsNamed(stack, names[5]!)).toHaveLength(0);
    expect(await permissionsOf(names[0]!)).toMatchObject({
      companyPermissions: ["admin"],
      appGroup: [
        {
          appGroupName: "EU Production",
          appGroupPermissions: ["basic_access", "export_user_data", "send_campaigns_canvases"],
        },
      ],
    });
    expect((await permissionsOf(names[4]!))?.appGroup).toMatchObject([
      { appGroupName: "EU Production", appGroupPermissions: ["export_user_data"], team: [] },
    ]);
  });

  it("a user added to three groups 2 s apart costs one call, after the last change has settled", async () => {
    const id = await provisioned("three@example.com");
    const before = await calls();
    for (const group of ["Analysts-EU", "Analysts-US", "Platform Admins"]) {
      await add(group, id);
      await drain();
      tick(2_000);
    }
    // 6 s after the first add (past its own window), 2 s after the last: still waiting.
    expect(await settling(id)).not.toBeNull();
    expect(await calls()).toEqual(before);
    // The queue panel, the admin API, /metrics and `plan` all say so.
    const queue = (await adminApi(stack)("/queue")).body;
    expect(queue.settling.count).toBe(1);
    expect(new Date(queue.settling.nextAt).getTime()).toBe((await settling(id))!.getTime());
    const metrics = await request(stack.service.url).get("/metrics");
    expect(metrics.text).toMatch(/^scim_connector_reconcile_queue_settling 1$/m);
    const report = await buildPlanReport(
      stack.service.db,
      stack.service.desired,
      { onEmailChange: "hold" },
      "three@example.com",
    );
    expect(formatPlanReport(report!)).toMatch(/Queue: waiting to settle until /);
    const agent = request.agent(stack.service.url);
    await signInLocally(agent);
    const overview = await agent.get("/admin");
    expect(overview.status).toBe(200);
    expect(overview.text).toContain("1 waiting to settle");
    // The user's own page, where an admin looks after adding them to a group, and the users list.
    const until = (await settling(id))!.toISOString().slice(0, 19).replace("T", " ");
    expect((await agent.get(`/admin/users/${id}`)).text).toContain(`Queue: waiting to settle until ${until} UTC`);
    expect((await agent.get("/admin/users?q=three@")).text).toContain("on the platform · waiting to settle");

    tick(SETTLE_MS);
    await drain();
    expect(await calls()).toEqual({ ...before, put: before.put + 1 });
    expect((await permissionsOf("three@example.com"))?.companyPermissions).toEqual(["admin"]);
    expect((await adminApi(stack)("/queue")).body.settling.count).toBe(0);
  });

  it("a user who keeps changing is applied at the cap", async () => {
    const id = await provisioned("restless@example.com");
    const before = await calls();
    await add("Analysts-EU", id);
    await drain();
    const first = await settling(id);
    for (const group of ["Analysts-US", "Platform Admins"]) {
      tick(4_000);
      await add(group, id);
      await drain();
    }
    // Each change restarted the window, but not past the cap counted from the first held change.
    expect((await settling(id))!.getTime()).toBe(first!.getTime() - SETTLE_MS + SETTLE_MAX_MS);
    tick(SETTLE_MAX_MS - 8_000);
    await drain();
    expect(await calls()).toEqual({ ...before, put: before.put + 1 });
  });

  it("a deactivation in the middle of a window goes out at once and the pending grant is dropped", async () => {
    const id = await provisioned("leaver@example.com");
    await add("Platform Admins", id);
    await drain();
    expect(await settling(id)).not.toBeNull();
    const before = await calls();
    await idp(stack).patch(`/Users/${id}`, [{ op: "replace", value: { active: false } }]);
    await drain(); // no clock move: it does not wait
    expect(await calls()).toEqual({ ...before, del: before.del + 1 });
    expect(await accountsNamed(stack, "leaver@example.com")).toHaveLength(0);
    expect((await stack.database.db.query(`SELECT 1 FROM reconcile_queue WHERE user_id = $1`, [id])).length).toBe(0);

    // Never on the platform: the held create is simply dropped, no call at all.
    const newcomer = await idp(stack).createUser("newcomer@example.com");
    await add("Marketing", newcomer);
    await drain();
    expect(await settling(newcomer)).not.toBeNull();
    await idp(stack).patch(`/Users/${newcomer}`, [{ op: "replace", value: { active: false } }]);
    tick(SETTLE_MS);
    await drain();
    expect(await calls()).toEqual({ ...before, del: before.del + 1 });
  });

  it("a move (removed from a group, added to another within a second) costs at most two calls and the removal is never delayed", async () => {
    const id = await provisioned("mover@example.com");
    await add("Analysts-EU", id);
    await drain();
    tick(SETTLE_MS);
    await drain();
    const before = await calls();
    await remove("Analysts-EU", id);
    await drain(); // no clock move
    expect((await permissionsOf("mover@example.com"))?.appGroup[0]?.appGroupPermissions).not.toContain(
      "export_user_data",
    );
    tick(700);
    await add("Platform Admins", id);
    await drain();
    tick(SETTLE_MS);
    await drain();
    const spent = (await calls()).put - before.put;
    expect(spent).toBeGreaterThanOrEqual(1);
    expect(spent).toBeLessThanOrEqual(2);
    expect((await permissionsOf("mover@example.com"))?.companyPermissions).toEqual(["admin"]);

    // Both arriving before the worker looks: one call, at once (the whole plan is a reduction).
    const both = await calls();
    await remove("Platform Admins", id);
    await add("Analysts-US", id);
    await drain();
    expect((await calls()).put - both.put).toBe(1);
    expect((await permissionsOf("mover@example.com"))?.companyPermissions).toEqual([]);
  });

  it("reconcile now skips the window for that user", async () => {
    const id = await provisioned("urgent@example.com");
    await add("Platform Admins", id);
    await drain();
    expect(await settling(id)).not.toBeNull();
    const before = await calls();
    const res = await request(stack.service.url)
      .post(`/admin/api/users/${id}/reconcile`)
      .set("Authorization", `Bearer ${ADMIN_TOKEN}`);
    expect(res.status).toBe(200);
    expect(await calls()).toEqual({ ...before, put: before.put + 1 });
    expect((await permissionsOf("urgent@example.com"))?.companyPermissions).toEqual(["admin"]);
  });

  it("does not hold a grant into the next budget day", async () => {
    const now = clock.now();
    clock.advance(nextUtcMidnight(now).getTime() - now.getTime() - END_OF_WINDOW_GUARD_MS / 2);
    const id = await provisioned("lastminute@example.com"); // provisioned() moves the clock past midnight
    clock.advance(nextUtcMidnight(clock.now()).getTime() - clock.now().getTime() - END_OF_WINDOW_GUARD_MS - 2_000);
    const before = await calls();
    await add("Platform Admins", id);
    await drain();
    // 12 s before midnight: held only until the guard, never past it.
    expect((await settling(id))!.getTime()).toBe(nextUtcMidnight(clock.now()).getTime() - END_OF_WINDOW_GUARD_MS);
    tick(2_000);
    await drain();
    expect(await calls()).toEqual({ ...before, put: before.put + 1 });
    expect(await idpUserId(stack.database.db, "lastminute@example.com")).toBe(id);
  });
});

describe("a grant waiting to settle when the process is killed", () => {
  let database: TestDatabase;
  let emulator: RunningEmulator;
  let connector: ConnectorProcess | undefined;

  beforeAll(async () => {
    database = await createTestDatabase();
    emulator = await startEmulator();
  });
  afterAll(async () => {
    await connector?.kill("SIGKILL");
    await emulator?.close();
    await database?.drop();
  });

  it("lands once after the restart", async () => {
    const mappingFile = await writeMappingFile();
    const port = await freePort();
    const env = {
      DATABASE_URL: database.url,
      PLATFORM_URL: emulator.url,
      PLATFORM_SCIM_TOKEN: "dev-scim-token",
      PLATFORM_REQUEST_ORIGIN: "settle-test",
      SCIM_TOKEN: IDP_TOKEN,
      ADMIN_TOKEN,
      MAPPING_FILE: mappingFile,
      RECONCILE_POLL_MS: "100",
      // Long enough that the kill surely lands inside the window (it is checked, not assumed).
      RECONCILE_SETTLE_MS: "4000",
    };
    connector = await spawnConnector(env, port);
    const send = (method: string, p: string, body: unknown) =>
      fetch(`${connector!.url}/scim/v2${p}`, {
        method,
        headers: { authorization: `Bearer ${IDP_TOKEN}`, "content-type": "application/scim+json" },
        body: JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, body: await r.json() }));
    const user = await send("POST", "/Users", {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
      userName: "killed@example.com",
      name: { givenName: "K", familyName: "L" },
      active: true,
    });
    const group = await send("POST", "/Groups", {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
      displayName: "Marketing",
      members: [{ value: user.body.id }],
    });
    expect(group.status).toBe(201);
    await eventually(
      "the grant to be waiting to settle",
      async () =>
        (
          await database.db.query(`SELECT 1 FROM reconcile_queue WHERE user_id = $1 AND settle_until > now()`, [
            user.body.id,
          ])
        ).length === 1,
      { timeoutMs: 20_000 },
    );
    await connector.kill("SIGKILL");
    expect((await emulatorDump(emulator.url)).dashboardUsers).toHaveLength(0);

    connector = await spawnConnector(env, port);
    await eventually(
      "the account after the restart",
      async () => (await emulatorDump(emulator.url)).dashboardUsers.length === 1,
    );
    await eventually(
      "an empty queue",
      async () => (await database.db.query(`SELECT 1 FROM reconcile_queue`)).length === 0,
    );
    expect(emulator.state.requestCounts.get("POST /scim/v2/Users") ?? 0).toBe(1);
  });
});
