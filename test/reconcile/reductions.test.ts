import { readFile } from "node:fs/promises";
import path from "node:path";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildPlanReport, formatPlanReport } from "../../src/cli/reconcile.js";
import { ManualClock } from "../../src/clock.js";
import { loadEnv } from "../../src/config/env.js";
import { freePort } from "../../src/db/embedded.js";
import { countPendingVerifications } from "../../src/db/reconcile/resyncRepository.js";
import { createRun, runPlanPhase } from "../../src/jobs/resync.js";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.js";
import type { ReconcileWorker } from "../../src/reconcile/worker.js";
import { signInLocally } from "../support/adminHarness.js";
import { spawnConnector, type ConnectorProcess } from "../support/connectorProcess.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";
import { emulatorDump } from "../support/emulator.js";
import {
  ADMIN_TOKEN,
  adminApi,
  emulatorState,
  IDP_TOKEN,
  idp,
  startStack,
  type Stack,
  writeMappingFile,
} from "../support/stack.js";
import { BY_HAND } from "../support/drift.js";
import { eventually } from "../support/wait.js";
import { accountsNamed, requestsTo } from "./helpers.js";

/**
 * Taking access away is immediate in every state, and a moment without access never destroys
 * the platform account (docs/reconciler.md, "Reductions" and "Strip now, delete later"). The
 * clock is a ManualClock and the worker is driven pass by pass (`runOnce`), so "not deleted
 * yet" is a fact about the queue at a given time, not the absence of a call in a time window.
 */

const POST = "POST /scim/v2/Users";
const PUT = "PUT /scim/v2/Users/{id}";
const DELETE = "DELETE /scim/v2/Users/{id}";
const SETTLE_MS = 5_000;
const GRACE_MS = 3_600_000;

type Harness = {
  stack: Stack;
  clock: ManualClock;
  worker: ReconcileWorker;
  groups: Record<string, string>;
};

async function harness(env: Record<string, string>): Promise<Harness> {
  const clock = new ManualClock();
  const stack = await startStack({ clock, workers: false, env });
  const groups: Record<string, string> = {};
  for (const name of ["Marketing", "Analysts-EU", "Platform Admins"]) groups[name] = await idp(stack).createGroup(name);
  return { stack, clock, worker: stack.service.reconciliation!.worker, groups };
}

function driver(h: Harness) {
  const { stack, groups } = h;
  const drain = async () => {
    while (await h.worker.runOnce());
  };
  const calls = async () => ({
    post: await requestsTo(stack, POST),
    put: await requestsTo(stack, PUT),
    del: await requestsTo(stack, DELETE),
  });
  const add = (group: string, userId: string) =>
    idp(stack).patch(`/Groups/${groups[group]}`, [{ op: "add", path: "members", value: [{ value: userId }] }]);
  const remove = (group: string, userId: string) =>
    idp(stack).patch(`/Groups/${groups[group]}`, [{ op: "remove", path: `members[value eq "${userId}"]` }]);
  const setActive = (userId: string, active: boolean) =>
    idp(stack).patch(`/Users/${userId}`, [{ op: "replace", value: { active } }]);
  const account = async (userName: string) => {
    const found = await accountsNamed(stack, userName);
    expect(found.length).toBeLessThanOrEqual(1);
    return found[0];
  };
  /** A user on the platform in these groups, the queue drained (grants settled). */
  const provisioned = async (userName: string, inGroups: string[]) => {
    const id = await idp(stack).createUser(userName);
    for (const g of inGroups) await add(g, id);
    await drain();
    h.clock.advance(SETTLE_MS);
    await drain();
    const on = await account(userName);
    expect(on).toBeDefined();
    return { id, platformId: on!.id };
  };
  const logOf = async (userName: string) =>
    (await adminApi(stack)(`/log?user=${encodeURIComponent(userName)}&limit=100`)).body.entries.reverse() as {
      id: string;
      action: string;
      outcome: string;
      note: string | null;
      callsSpent: number;
    }[];
  return { drain, calls, add, remove, setActive, account, provisioned, logOf };
}

describe("strip now, delete later", () => {
  let h: Harness;
  let d: ReturnType<typeof driver>;

  beforeAll(async () => {
    h = await harness({
      RECONCILE_SETTLE_MS: String(SETTLE_MS),
      RECONCILE_DEPROVISION_GRACE_MS: String(GRACE_MS),
      // The clock is hours ahead of the wall clock by the leaver test; the admin session must outlive that.
      ADMIN_SESSION_IDLE_MINUTES: "1440",
    });
    d = driver(h);
  });
  afterAll(async () => h?.stack.close());

  it("the default grace is 24 h and 0 keeps the immediate delete; a negative grace is refused at boot", () => {
    expect(loadEnv({}).RECONCILE_DEPROVISION_GRACE_MS).toBe(86_400_000);
    expect(loadEnv({ RECONCILE_DEPROVISION_GRACE_MS: "0" }).RECONCILE_DEPROVISION_GRACE_MS).toBe(0);
    expect(() => loadEnv({ RECONCILE_DEPROVISION_GRACE_MS: "-1" })).toThrow(/RECONCILE_DEPROVISION_GRACE_MS/);
    expect(loadEnv({}).RECONCILE_ON_ADOPTED_DEPROVISION).toBe("strip");
  });

  it("a move (removed from the only mapped group, added to another 2 s later) keeps the platform id and costs two PUTs", async () => {
    const { id, platformId } = await d.provisioned("mover@example.com", ["Marketing"]);
    const before = await d.calls();
    await d.remove("Marketing", id);
    await d.drain(); // no clock move: the removal goes out at once
    expect(await d.account("mover@example.com")).toMatchObject({
      id: platformId,
      permissions: { companyPermissions: [], appGroup: [] },
    });
    h.clock.advance(2_000);
    await d.add("Analysts-EU", id);
    await d.drain();
    h.clock.advance(SETTLE_MS);
    await d.drain();
    expect(await d.account("mover@example.com")).toMatchObject({
      id: platformId,
      permissions: { appGroup: [{ appGroupName: "EU Production", appGroupPermissions: ["export_user_data"] }] },
    });
    expect(await d.calls()).toEqual({ ...before, put: before.put + 2 });
    // Nothing is left to delete: the grant ended the stripped state.
    h.clock.advance(GRACE_MS);
    await d.drain();
    expect((await d.account("mover@example.com"))?.id).toBe(platformId);
    expect((await d.calls()).del).toBe(before.del);
  });

  it("deactivated then reactivated within the grace keeps the platform id", async () => {
    const { id, platformId } = await d.provisioned("misclick@example.com", ["Marketing"]);
    const before = await d.calls();
    await d.setActive(id, false);
    await d.drain();
    expect((await d.account("misclick@example.com"))?.permissions.appGroup).toEqual([]);
    h.clock.advance(GRACE_MS / 2);
    await d.setActive(id, true);
    await d.drain();
    h.clock.advance(SETTLE_MS);
    await d.drain();
    expect(await d.account("misclick@example.com")).toMatchObject({
      id: platformId,
      permissions: { appGroup: [{ appGroupName: "EU Production" }] },
    });
    h.clock.advance(GRACE_MS);
    await d.drain();
    expect(await d.calls()).toEqual({ ...before, put: before.put + 2 });
    expect((await d.account("misclick@example.com"))?.id).toBe(platformId);
  });

  it("a leaver is stripped at once, shown as stripped everywhere, and deleted after the grace with one DELETE", async () => {
    const { id, platformId } = await d.provisioned("leaver@example.com", ["Marketing", "Platform Admins"]);
    const grantsOf = async (userName: string) => {
      const res = await request(h.stack.service.url)
        .get(`/admin/api/access?user=${encodeURIComponent(userName)}`)
        .set("Authorization", `Bearer ${ADMIN_TOKEN}`);
      expect(res.status).toBe(200);
      return (res.body.rows as { userName: string }[]).filter((r) => r.userName === userName);
    };
    expect((await grantsOf("leaver@example.com")).length).toBeGreaterThan(0);
    const before = await d.calls();
    const strippedAt = h.clock.now();
    await d.setActive(id, false);
    await d.drain();
    expect(await d.account("leaver@example.com")).toMatchObject({
      id: platformId,
      permissions: { companyPermissions: [], appGroup: [] },
    });
    expect(await d.calls()).toEqual({ ...before, put: before.put + 1 });
    // The clock runs on from the real one (plus what the test advanced): the grace counts from the strip.
    const [row] = await h.stack.database.db.query<{ delete_after: Date }>(
      `SELECT delete_after FROM platform_accounts WHERE user_id = $1`,
      [id],
    );
    const deleteAt = row!.delete_after;
    expect(deleteAt.getTime()).toBeGreaterThanOrEqual(strippedAt.getTime() + GRACE_MS);
    expect(deleteAt.getTime()).toBeLessThanOrEqual(h.clock.now().getTime() + GRACE_MS);

    // The log, the queue, /metrics, `plan` and the access review say so.
    const stripEntry = (await d.logOf("leaver@example.com")).at(-1)!;
    expect(stripEntry).toMatchObject({ action: "update", outcome: "succeeded", callsSpent: 1 });
    expect(stripEntry.note).toBe(
      `access removed: deactivated in the IdP; account kept until ${deleteAt.toISOString()}`,
    );
    const queue = (await adminApi(h.stack)("/queue")).body;
    expect(queue.pendingDeletes).toEqual({ count: 1, nextAt: deleteAt.toISOString() });
    expect(queue.total).toBe(0);
    const metrics = await request(h.stack.service.url).get("/metrics");
    expect(metrics.text).toMatch(/^scim_connector_reconcile_pending_deletes 1$/m);
    const report = await buildPlanReport(
      h.stack.service.db,
      h.stack.service.desired,
      { onEmailChange: "hold", deprovisionGraceMs: GRACE_MS },
      "leaver@example.com",
      h.clock,
    );
    const text = formatPlanReport(report!);
    expect(text).toContain(`no permissions, deleted after ${deleteAt.toISOString()}`);
    expect(text).toContain(`Queue: pending delete at ${deleteAt.toISOString()}`);
    expect(await grantsOf("leaver@example.com")).toEqual([]);
    const agent = request.agent(h.stack.service.url);
    await signInLocally(agent);
    const page = await agent.get(`/admin/users/${id}`);
    expect(page.status).toBe(200);
    // What was removed, and what stays until when (issue 47: the page's words changed, not what it says).
    expect(page.text).toMatch(
      /stripped<\/span> Removed .*: every permission .*Stays: the account and its profile, until .*, when it is deleted/,
    );
    // What the strip did is the entry's note, not an error.
    const entryPage = await agent.get(`/admin/log/${stripEntry.id}`);
    expect(entryPage.text).toContain(
      `<dt>Note</dt><dd>access removed: deactivated in the IdP; account kept until ${deleteAt.toISOString()}</dd>`,
    );
    expect(entryPage.text).not.toContain("<dt>Error</dt>");

    // A minute before the grace ends (the clock also runs on in real time): nothing. At the end: one DELETE.
    h.clock.advance(deleteAt.getTime() - h.clock.now().getTime() - 60_000);
    await d.drain();
    expect(await d.account("leaver@example.com")).toBeDefined();
    expect((await d.calls()).del).toBe(before.del);
    h.clock.advance(60_000);
    await d.drain();
    expect(await d.account("leaver@example.com")).toBeUndefined();
    expect(await d.calls()).toEqual({ ...before, put: before.put + 1, del: before.del + 1 });
    expect((await d.logOf("leaver@example.com")).at(-1)).toMatchObject({
      action: "deprovision",
      outcome: "succeeded",
      note: "account deleted after the grace",
    });
    expect((await adminApi(h.stack)("/queue")).body.pendingDeletes).toEqual({ count: 0, nextAt: null });
  });

  it("access put back by hand on a stripped account: a verifying resync takes it away at once, and the delete keeps its time", async () => {
    const { id, platformId } = await d.provisioned("drifter@example.com", ["Marketing"]);
    await d.setActive(id, false);
    await d.drain();
    const deleteAfterOf = async () =>
      (
        await h.stack.database.db.query<{ delete_after: Date }>(
          `SELECT delete_after FROM platform_accounts WHERE user_id = $1`,
          [id],
        )
      )[0]!.delete_after;
    const deleteAt = await deleteAfterOf();
    // Someone makes the kept account a company admin in the platform's UI, half-way through the grace.
    const kept = await d.account("drifter@example.com");
    expect(
      (
        await request(h.stack.emulator.url)
          .put(`/scim/v2/Users/${platformId}`)
          .set(BY_HAND)
          .send({
            schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
            userName: kept!.userName,
            name: { givenName: "D", familyName: "Test" },
            department: "marketing",
            permissions: { companyPermissions: ["admin"], appGroup: [] },
          })
      ).status,
    ).toBe(200);
    // A verifying resync, as an admin starts one: its plan phase marks the user (whose plan is
    // the pending delete) and files the account's verification.
    const deps = {
      db: h.stack.service.db,
      clock: h.clock,
      desired: h.stack.service.desired,
      policies: { onEmailChange: "hold" as const, deprovisionGraceMs: GRACE_MS },
    };
    const runId = await createRun(deps, { dryRun: false, verify: true, trigger: "api", actor: null });
    await runPlanPhase(deps, runId);
    // The check runs now, not at the grace's end: the access put back by hand is taken away at
    // once (one PUT), the delete keeps its time, and the run has no verification left waiting.
    const beforeCheck = await d.calls();
    await d.drain();
    expect((await d.account("drifter@example.com"))?.permissions.companyPermissions).toEqual([]);
    expect((await deleteAfterOf()).toISOString()).toBe(deleteAt.toISOString());
    const checked = await d.logOf("drifter@example.com");
    expect(checked.at(-2)).toMatchObject({ action: "drift", outcome: "enforced" });
    expect(checked.at(-1)).toMatchObject({ action: "update", outcome: "succeeded" });
    expect(await d.calls()).toMatchObject({ put: beforeCheck.put + 1, del: beforeCheck.del });
    expect(await countPendingVerifications(h.stack.database.db, runId)).toBe(0);

    const before = await d.calls();
    h.clock.advance(deleteAt.getTime() - h.clock.now().getTime());
    await d.drain();
    const log = await d.logOf("drifter@example.com");
    expect(log.at(-1)).toMatchObject({ action: "deprovision", outcome: "succeeded" });
    expect(await d.account("drifter@example.com")).toBeUndefined();
    expect(await d.calls()).toEqual({ ...before, del: before.del + 1 });
  });

  it("docs/okta.md's deactivate and reactivate rows, sent as written there, do what the rows say", async () => {
    const text = await readFile(path.resolve(import.meta.dirname, "../../docs/okta.md"), "utf8");
    const row = (label: string) => {
      const line = text.split("\n").find((l) => l.startsWith(`| ${label} `));
      expect(line, label).toBeDefined();
      return line!.split("|").map((cell) => cell.trim());
    };
    const [, , deactivateSent, deactivateDone] = row("Unassign / deactivate");
    const [, , reactivateSent, reactivateDone] = row("Reactivate");
    // The PATCH operation Okta sends, copied from the row: path-less, the attribute in `value`.
    const operation = JSON.parse(/`(\{"op":"replace","value":\{"active":false\}\})`/.exec(deactivateSent!)![1]!);
    expect(deactivateDone).toMatch(/strips the dashboard user's permissions at once/);
    expect(deactivateDone).toMatch(/deletes the account after `RECONCILE_DEPROVISION_GRACE_MS` \(1 day\)/);
    expect(loadEnv({}).RECONCILE_DEPROVISION_GRACE_MS).toBe(86_400_000); // "1 day"
    expect(reactivateSent).toBe("the same with `active: true`");
    expect(reactivateDone).toMatch(/within the grace the kept account gets its permissions back \(a PUT\)/);
    expect(reactivateDone).toMatch(/after it, the dashboard user is created again/);
    const reactivate = { ...operation, value: { active: true } };

    // Deactivated, then reactivated within the grace: the same account, stripped at once, a PUT back.
    const within = await d.provisioned("okta-doc-within@example.com", ["Marketing"]);
    let before = await d.calls();
    await idp(h.stack).patch(`/Users/${within.id}`, [operation]);
    await d.drain();
    expect(await d.account("okta-doc-within@example.com")).toMatchObject({
      id: within.platformId,
      permissions: { companyPermissions: [], appGroup: [] },
    });
    expect(await d.calls()).toEqual({ ...before, put: before.put + 1 });
    h.clock.advance(GRACE_MS / 2);
    await idp(h.stack).patch(`/Users/${within.id}`, [reactivate]);
    await d.drain();
    h.clock.advance(SETTLE_MS);
    await d.drain();
    expect(await d.account("okta-doc-within@example.com")).toMatchObject({
      id: within.platformId,
      permissions: { appGroup: [{ appGroupName: "EU Production" }] },
    });
    expect(await d.calls()).toEqual({ ...before, put: before.put + 2 });

    // Deactivated past the grace: deleted then; reactivated after it: created again (a POST).
    const after = await d.provisioned("okta-doc-after@example.com", ["Marketing"]);
    before = await d.calls();
    await idp(h.stack).patch(`/Users/${after.id}`, [operation]);
    await d.drain();
    expect((await d.account("okta-doc-after@example.com"))?.id).toBe(after.platformId);
    h.clock.advance(GRACE_MS + 60_000);
    await d.drain();
    expect(await d.account("okta-doc-after@example.com")).toBeUndefined();
    await idp(h.stack).patch(`/Users/${after.id}`, [reactivate]);
    await d.drain();
    h.clock.advance(SETTLE_MS);
    await d.drain();
    const again = await d.account("okta-doc-after@example.com");
    expect(again?.id).toBeDefined();
    expect(again!.id).not.toBe(after.platformId);
    expect(await d.calls()).toEqual({ post: before.post + 1, put: before.put + 1, del: before.del + 1 });
  });

  it("a user deleted in the IdP is deleted on the platform at once", async () => {
    const { id } = await d.provisioned("deleted@example.com", ["Marketing"]);
    const before = await d.calls();
    expect((await idp(h.stack).send("delete", `/Users/${id}`)).status).toBe(204);
    await d.drain();
    expect(await d.account("deleted@example.com")).toBeUndefined();
    expect(await d.calls()).toEqual({ ...before, del: before.del + 1 });
  });

  it("a demotion during a held email change reaches the platform under the current userName; only the rename waits", async () => {
    const { id, platformId } = await d.provisioned("renamed@example.com", ["Marketing", "Platform Admins"]);
    await idp(h.stack).patch(`/Users/${id}`, [{ op: "replace", path: "userName", value: "renamed.new@example.com" }]);
    await d.drain();
    const holds = (await adminApi(h.stack)("/approvals")).body.holds;
    expect(holds).toMatchObject([{ userId: id, kind: "email_change", decision: null }]);
    const before = await d.calls();
    await d.remove("Platform Admins", id);
    await d.drain(); // no clock move: a reduction never waits
    expect(await d.account("renamed@example.com")).toMatchObject({
      id: platformId,
      permissions: { companyPermissions: [], appGroup: [{ appGroupName: "EU Production" }] },
    });
    expect(await accountsNamed(h.stack, "renamed.new@example.com")).toHaveLength(0);
    expect(await d.calls()).toEqual({ ...before, put: before.put + 1 });
    expect((await adminApi(h.stack)("/approvals")).body.holds).toMatchObject([{ userId: id, kind: "email_change" }]);
  });
});

describe("reductions with the ordinary budget spent, and recreate on an email change", () => {
  let h: Harness;
  let d: ReturnType<typeof driver>;

  beforeAll(async () => {
    // 20 calls a day: 18 ordinary, a reserve of 2.
    h = await harness({
      PLATFORM_SCIM_DAILY_BUDGET: "20",
      RECONCILE_DEPROVISION_GRACE_MS: String(GRACE_MS),
      RECONCILE_ON_EMAIL_CHANGE: "recreate",
    });
    d = driver(h);
  });
  afterAll(async () => h?.stack.close());

  it("with RECONCILE_ON_EMAIL_CHANGE=recreate the new account is created in the same pass as the delete", async () => {
    const { id, platformId } = await d.provisioned("before@example.com", ["Marketing"]);
    const before = await d.calls();
    await idp(h.stack).patch(`/Users/${id}`, [{ op: "replace", path: "userName", value: "after@example.com" }]);
    await d.drain();
    expect(await d.account("before@example.com")).toBeUndefined();
    const created = await d.account("after@example.com");
    expect(created).toMatchObject({ permissions: { appGroup: [{ appGroupName: "EU Production" }] } });
    expect(created!.id).not.toBe(platformId);
    expect(await d.calls()).toEqual({ ...before, post: before.post + 1, del: before.del + 1 });
  });

  it("a demotion reaches the platform with the ordinary budget spent", async () => {
    const { id } = await d.provisioned("demoted@example.com", ["Marketing", "Platform Admins"]);
    // Spend the rest of the ordinary budget on creates, leaving some waiting for tomorrow.
    for (let i = 0; i < 20; i++) {
      const other = await idp(h.stack).createUser(`busy${i}@example.com`);
      await d.add("Marketing", other);
    }
    await d.drain();
    const budget = (await adminApi(h.stack)("/budget")).body;
    expect(budget).toMatchObject({ used: 18, remaining: 0, remainingWithReserve: 2 });
    expect((await adminApi(h.stack)("/queue")).body.total).toBeGreaterThan(0);
    const before = await d.calls();

    await d.remove("Platform Admins", id);
    await d.drain();
    expect((await d.account("demoted@example.com"))?.permissions).toMatchObject({
      companyPermissions: [],
      appGroup: [{ appGroupName: "EU Production" }],
    });
    expect(await d.calls()).toEqual({ ...before, put: before.put + 1 });
    expect((await adminApi(h.stack)("/budget")).body).toMatchObject({ used: 19, remainingWithReserve: 1 });
  });
});

describe("the breaker on a mass change", () => {
  let h: Harness;
  let d: ReturnType<typeof driver>;

  beforeAll(async () => {
    h = await harness({
      RECONCILE_DEPROVISION_GRACE_MS: String(GRACE_MS),
      DEPROVISION_BREAKER_MIN: "3",
      DEPROVISION_BREAKER_PERCENT: "0",
    });
    d = driver(h);
  });
  afterAll(async () => h?.stack.close());

  it("a wave of strips goes out at once, but the deletes after the grace wait for an admin", async () => {
    const names = Array.from({ length: 6 }, (_, i) => `wave${i}@example.com`);
    const ids: string[] = [];
    for (const name of names) ids.push((await d.provisioned(name, ["Marketing"])).id);
    const before = await d.calls();
    // A mapping mistake's equivalent: the one mapped group is deleted in the IdP.
    expect((await idp(h.stack).send("delete", `/Groups/${h.groups.Marketing}`)).status).toBe(204);
    await d.drain();
    for (const name of names) expect((await d.account(name))?.permissions.appGroup).toEqual([]);
    expect(await d.calls()).toEqual({ ...before, put: before.put + 6 });
    // Past the threshold (3 an hour), each strip's later delete is held at once: the admin hears of
    // the wave during the grace, while fixing the mapping would still restore everyone with one PUT.
    expect((await adminApi(h.stack)("/approvals")).body.holds).toHaveLength(3);

    h.clock.advance(GRACE_MS);
    await d.drain();
    // Nothing destroyed: every account is still there, and every delete is held.
    for (const name of names) expect(await d.account(name)).toBeDefined();
    expect((await d.calls()).del).toBe(before.del);
    const holds = (await adminApi(h.stack)("/approvals")).body.holds as { kind: string }[];
    expect(holds).toHaveLength(6);
    expect(holds.every((x) => x.kind === "deprovision")).toBe(true);

    const approve = await request(h.stack.service.url)
      .post(`/admin/api/approvals/all/approve`)
      .set("Authorization", `Bearer ${ADMIN_TOKEN}`);
    expect(approve.status).toBe(200);
    await d.drain();
    expect((await d.calls()).del).toBe(before.del + 6);
    expect((await emulatorState(h.stack)).dashboardUsers.filter((u) => u.userName.startsWith("wave"))).toEqual([]);
  });
});

describe("a pending delete when the process is killed during the grace", () => {
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

  it("deletes once, not before the grace ends, after a restart", async () => {
    const mappingFile = await writeMappingFile();
    const port = await freePort();
    const env = {
      DATABASE_URL: database.url,
      PLATFORM_URL: emulator.url,
      PLATFORM_SCIM_TOKEN: "dev-scim-token",
      PLATFORM_REQUEST_ORIGIN: "grace-test",
      SCIM_TOKEN: IDP_TOKEN,
      ADMIN_TOKEN,
      MAPPING_FILE: mappingFile,
      RECONCILE_POLL_MS: "100",
      // Long enough that the kill and the restarted process's readiness land inside the grace (both
      // checked, not assumed); the restart took about 4 s of an 8 s grace on a shared 2-core machine.
      RECONCILE_DEPROVISION_GRACE_MS: "12000",
    };
    connector = await spawnConnector(env, port);
    const send = (method: string, p: string, body: unknown) =>
      fetch(`${connector!.url}/scim/v2${p}`, {
        method,
        headers: { authorization: `Bearer ${IDP_TOKEN}`, "content-type": "application/scim+json" },
        body: JSON.stringify(body),
      }).then(async (r) => {
        const text = await r.text();
        return { status: r.status, body: text ? JSON.parse(text) : null };
      });
    const user = await send("POST", "/Users", {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
      userName: "graced@example.com",
      name: { givenName: "G", familyName: "R" },
      active: true,
    });
    await send("POST", "/Groups", {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
      displayName: "Marketing",
      members: [{ value: user.body.id }],
    });
    const onPlatform = async () => (await emulatorDump(emulator.url)).dashboardUsers;
    await eventually("the account", async () => (await onPlatform()).length === 1, { timeoutMs: 20_000 });
    const platformId = (await onPlatform())[0]!.id;

    const patched = await send("PATCH", `/Users/${user.body.id}`, {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
      Operations: [{ op: "replace", value: { active: false } }],
    });
    expect(patched.status).toBeLessThan(300);
    const stripped = async () =>
      (
        await database.db.query<{ delete_after: Date }>(
          `SELECT delete_after FROM platform_accounts WHERE user_id = $1 AND delete_after IS NOT NULL`,
          [user.body.id],
        )
      )[0];
    // The strip done and its reconcile finished (no claim left on the user's row, if it has one).
    const finished = async () =>
      (
        await database.db.query(`SELECT 1 FROM reconcile_queue WHERE user_id = $1 AND claimed_by IS NOT NULL`, [
          user.body.id,
        ])
      ).length === 0;
    await eventually("the strip", async () => (await stripped()) !== undefined && (await finished()), {
      timeoutMs: 20_000,
    });
    await connector.kill("SIGKILL");
    const deleteAfter = (await stripped())!.delete_after;
    expect(Date.now()).toBeLessThan(deleteAfter.getTime()); // the kill landed inside the grace
    // The pending delete outlives the process: it is the user's queue row.
    expect(
      await database.db.query(`SELECT 1 FROM reconcile_queue WHERE user_id = $1 AND parked_at IS NULL`, [user.body.id]),
    ).toHaveLength(1);
    expect(await onPlatform()).toMatchObject([
      { id: platformId, permissions: { companyPermissions: [], appGroup: [] } },
    ]);

    connector = await spawnConnector(env, port);
    // The restarted process was ready (serving, its worker running) inside the grace, with the account
    // still held: otherwise "not before the grace ends" would hold whatever the restart did.
    const readyAt = Date.now();
    console.log(`restarted process ready ${deleteAfter.getTime() - readyAt} ms before delete_after`);
    expect(readyAt).toBeLessThan(deleteAfter.getTime());
    expect((await onPlatform()).map((u) => u.id)).toEqual([platformId]);
    await eventually("the delete after the restart", async () => (await onPlatform()).length === 0, {
      timeoutMs: 30_000,
    });
    const deletedEntries = () =>
      database.db.query<{ at: Date; note: string | null }>(
        `SELECT at, note FROM reconcile_log WHERE user_id = $1 AND action = 'deprovision' AND outcome = 'succeeded'`,
        [user.body.id],
      );
    // The log entry is written just after the DELETE's answer: wait for it, then for the queue to empty.
    await eventually("the delete's log entry", async () => (await deletedEntries()).length > 0, { timeoutMs: 20_000 });
    await eventually(
      "an empty queue",
      async () => (await database.db.query(`SELECT 1 FROM reconcile_queue`)).length === 0,
      { timeoutMs: 20_000 },
    );
    expect(emulator.state.requestCounts.get("DELETE /scim/v2/Users/{id}") ?? 0).toBe(1);
    const deleted = await deletedEntries();
    expect(deleted).toHaveLength(1);
    expect(deleted[0]!.at.getTime()).toBeGreaterThanOrEqual(deleteAfter.getTime());
    expect(deleted[0]!.note).toBe("account deleted after the grace");
  });
});
