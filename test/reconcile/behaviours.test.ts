import { writeFile } from "node:fs/promises";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_TOKEN, adminApi, emulatorState, idp, startStack, TEST_MAPPING, type Stack } from "../support/stack.js";
import { addFault, clearFaults, emulatorCounts } from "../support/emulator.js";
import { waitForQueueIdle } from "../support/queue.js";
import { eventually } from "../support/wait.js";
import { accountsNamed, MARKETING_WORKSPACE, platformScim, requestsTo, SCIM_USER } from "./helpers.js";

/**
 * The reconciler's answers to what the platform (and admins) do, each checked against the
 * emulator's end state and the reconciliation log: 409 adoption, lost create answers, 429
 * pauses, 404 on update, email changes, mapping changes.
 */

const POST = "POST /scim/v2/Users";
const LOOKUP = "GET /scim/v2/Users";
const PUT = "PUT /scim/v2/Users/{id}";

type LogEntry = {
  changes?: unknown[];
  action: string;
  outcome: string;
  callsSpent: number;
  error: string | null;
  platformStatus: number | null;
  trigger: { kind: string };
};

describe("reconciler behaviours against the emulator", () => {
  let stack: Stack;
  let marketing: string;
  let analysts: string;

  beforeAll(async () => {
    // A short platform timeout lets a delayed create time out after the platform applied it.
    stack = await startStack({ env: { PLATFORM_TIMEOUT_MS: "2000" } });
    marketing = await idp(stack).createGroup("Marketing");
    analysts = await idp(stack).createGroup("Analysts-EU");
  });
  afterAll(async () => stack?.close());

  const counts = async () => ({
    post: await requestsTo(stack, POST),
    lookup: await requestsTo(stack, LOOKUP),
    put: await requestsTo(stack, PUT),
  });
  const delta = async (before: { post: number; lookup: number; put: number }) => {
    const now = await counts();
    return { post: now.post - before.post, lookup: now.lookup - before.lookup, put: now.put - before.put };
  };
  const logOf = async (userName: string): Promise<LogEntry[]> =>
    (await adminApi(stack)(`/log?user=${encodeURIComponent(userName)}&limit=100`)).body.entries.reverse();
  const join = (groupId: string, userId: string) =>
    idp(stack).patch(`/Groups/${groupId}`, [{ op: "add", path: "members", value: [{ value: userId }] }]);

  /** Creates an IdP user in Marketing and waits until the platform holds the account. */
  async function provisioned(userName: string): Promise<string> {
    const id = await idp(stack).createUser(userName);
    await join(marketing, id);
    await eventually(`${userName} on the platform`, async () => (await accountsNamed(stack, userName)).length === 1, {
      timeoutMs: 20_000,
    });
    await waitForQueueIdle(stack, { deferred: "wait" });
    return id;
  }

  const marketingResource = (userName: string, overrides: Record<string, unknown> = {}) => ({
    schemas: [SCIM_USER],
    userName,
    name: { givenName: userName.split("@")[0], familyName: "Test" },
    department: "marketing",
    permissions: { companyPermissions: [], appGroup: [MARKETING_WORKSPACE] },
    ...overrides,
  });

  it("a 409 on create is adopted with one lookup, and no PUT when the account already matches", async () => {
    const userName = "adopt-same@example.com";
    const existing = await platformScim(stack.emulator.url).create(marketingResource(userName));
    expect(existing.status).toBe(201);
    const before = await counts();
    await provisioned(userName);
    expect(await delta(before)).toEqual({ post: 1, lookup: 1, put: 0 });
    const accounts = await accountsNamed(stack, userName);
    expect(accounts.map((a) => a.id)).toEqual([existing.body.id]);
    expect(await logOf(userName)).toMatchObject([{ action: "adopt", outcome: "succeeded", callsSpent: 2 }]);
  });

  it("a 409 on create is adopted with one lookup and one PUT when the account differs", async () => {
    const userName = "adopt-diff@example.com";
    const existing = await platformScim(stack.emulator.url).create(
      marketingResource(userName, {
        department: "finance",
        permissions: { companyPermissions: ["admin"], appGroup: [] },
      }),
    );
    const before = await counts();
    await provisioned(userName);
    expect(await delta(before)).toEqual({ post: 1, lookup: 1, put: 1 });
    const [account] = await accountsNamed(stack, userName);
    expect(account!.id).toBe(existing.body.id);
    expect(account).toMatchObject({
      department: "marketing",
      permissions: { companyPermissions: [], appGroup: [MARKETING_WORKSPACE] },
    });
    const [entry] = await logOf(userName);
    expect(entry).toMatchObject({ action: "adopt", outcome: "succeeded", callsSpent: 3 });
  });

  it("a create whose connection dropped is resolved by a lookup before anything is sent again", async () => {
    const userName = "dropped@example.com";
    await addFault(stack.emulator.url, { method: "POST", path: "/scim/v2/Users", dropConnection: true, count: 1 });
    const before = await counts();
    await provisioned(userName);
    // The emulator dropped the connection before applying the create, so the lookup found
    // nothing and only then was the create sent again: one lookup between the two POSTs.
    expect(await delta(before)).toEqual({ post: 2, lookup: 1, put: 0 });
    expect(await accountsNamed(stack, userName)).toHaveLength(1);
    expect((await logOf(userName)).map((e) => `${e.action}:${e.outcome}`)).toEqual([
      "create:retrying",
      "create:succeeded",
    ]);
  });

  it("a create that timed out after the platform applied it is adopted by lookup, never POSTed again", async () => {
    const userName = "timed-out@example.com";
    await addFault(stack.emulator.url, { method: "POST", path: "/scim/v2/Users", delayMs: 3_000, count: 1 });
    const before = await counts();
    await provisioned(userName);
    expect(await delta(before)).toEqual({ post: 1, lookup: 1, put: 0 });
    expect(await accountsNamed(stack, userName)).toHaveLength(1);
    const log = await logOf(userName);
    expect(log.map((e) => `${e.action}:${e.outcome}`)).toEqual(["create:retrying", "create:succeeded"]);
    expect(log[0]!.error).toMatch(/uncertain: timeout/);
  });

  it("a 429 pauses SCIM calls, and the user converges once the pause is over", async () => {
    const userName = "rate-limited@example.com";
    // The emulator's injected 429 carries no Retry-After, so each pause is the transport's 1 s fallback.
    await addFault(stack.emulator.url, { method: "POST", path: "/scim/v2/Users", status: 429, count: 3 });
    const before = await counts();
    const scimBefore = (await emulatorCounts(stack.emulator.url)).scimDaily.used;
    const started = Date.now();
    await provisioned(userName);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_500);
    expect(await delta(before)).toEqual({ post: 4, lookup: 0, put: 0 });
    // Refused requests are not counted by the platform; the ledger debited every attempt.
    expect((await emulatorCounts(stack.emulator.url)).scimDaily.used).toBe(scimBefore + 1);
    const log = await logOf(userName);
    expect(log.map((e) => `${e.action}:${e.outcome}`)).toEqual(["create:retrying", "create:succeeded"]);
    expect(log[0]!.error).toMatch(/rate limited until/);
    expect(await accountsNamed(stack, userName)).toHaveLength(1);
  });

  it("an account deleted on the platform behind the connector's back is recreated on the next update (404 on PUT)", async () => {
    const userName = "deleted-behind@example.com";
    const userId = await provisioned(userName);
    const [account] = await accountsNamed(stack, userName);
    expect((await platformScim(stack.emulator.url).delete(account!.id)).status).toBe(204);
    const before = await counts();
    await join(analysts, userId);
    await eventually("the recreated account", async () => (await accountsNamed(stack, userName)).length === 1, {
      timeoutMs: 20_000,
    });
    await waitForQueueIdle(stack, { deferred: "wait" });
    expect(await delta(before)).toEqual({ post: 1, lookup: 0, put: 1 });
    const [recreated] = await accountsNamed(stack, userName);
    expect(recreated!.id).not.toBe(account!.id);
    expect(recreated!.permissions.appGroup[0]!.appGroupPermissions).toEqual([
      "basic_access",
      "export_user_data",
      "send_campaigns_canvases",
    ]);
    expect((await logOf(userName)).map((e) => `${e.action}:${e.outcome}`)).toEqual([
      "create:succeeded",
      "update:failed",
      "create:succeeded",
    ]);
  });

  it("a changed userName is held for an admin; approving it deletes and re-creates the account", async () => {
    const oldName = "old-name@example.com";
    const newName = "new-name@example.com";
    const userId = await provisioned(oldName);
    await idp(stack).patch(`/Users/${userId}`, [{ op: "replace", path: "userName", value: newName }]);
    await eventually(
      "the needs-admin entry",
      async () => (await logOf(newName)).some((e) => e.action === "needs-admin"),
      { timeoutMs: 20_000 },
    );
    await waitForQueueIdle(stack, { deferred: "wait" });
    expect(await accountsNamed(stack, oldName)).toHaveLength(1);
    expect(await accountsNamed(stack, newName)).toHaveLength(0);
    expect((await logOf(newName)).find((e) => e.action === "needs-admin")).toMatchObject({
      outcome: "held",
      callsSpent: 0,
    });
    const holds = await adminApi(stack)("/approvals");
    expect(holds.body.holds).toMatchObject([{ userId, kind: "email_change", userName: newName, decision: null }]);

    const approve = await request(stack.service.url)
      .post(`/admin/api/approvals/${userId}/approve`)
      .set("Authorization", `Bearer ${ADMIN_TOKEN}`);
    expect(approve.status).toBe(200);
    await eventually("the re-created account", async () => (await accountsNamed(stack, newName)).length === 1, {
      timeoutMs: 20_000,
    });
    await waitForQueueIdle(stack, { deferred: "wait" });
    expect(await accountsNamed(stack, oldName)).toHaveLength(0);
    const [account] = await accountsNamed(stack, newName);
    expect(account).toMatchObject({ department: "marketing", permissions: { appGroup: [MARKETING_WORKSPACE] } });
    expect((await adminApi(stack)("/approvals")).body.holds).toEqual([]);
    const actions = (await logOf(newName)).map((e) => `${e.action}:${e.outcome}`);
    expect(actions.slice(-3)).toEqual(["approve:succeeded", "deprovision:succeeded", "create:succeeded"]);
  });

  it("a mapping change marks the changed groups' members and the account holders (re-derived for free), no one else; only the affected user costs a call", async () => {
    const analyst = "analyst-only@example.com";
    const analystId = await idp(stack).createUser(analyst);
    await join(analysts, analystId);
    // In no group: no rule gives it an account, so no mapping change about a group concerns it.
    const groupless = "groupless@example.com";
    await idp(stack).createUser(groupless);
    await eventually("the analyst's account", async () => (await accountsNamed(stack, analyst)).length === 1, {
      timeoutMs: 20_000,
    });
    await waitForQueueIdle(stack, { deferred: "wait" });
    const usersBefore = (await emulatorState(stack)).dashboardUsers.filter((u) => u.userName !== analyst);
    const before = await counts();

    // The workers pause while the mapping is put in force, so the marks it made can be read from the queue.
    const worker = stack.service.reconciliation!.worker;
    await worker.stop();
    await writeFile(
      stack.mappingFile,
      TEST_MAPPING.replace("permissions: [export_user_data]", "permissions: [export_user_data, basic_access]"),
    );
    const reloaded = await stack.service.mappings.reload(stack.service.db);
    expect(reloaded.ok).toBe(true);
    const marked: { user_name: string }[] = await stack.database.db.query(
      `SELECT u.user_name FROM reconcile_queue q JOIN idp_users u ON u.id = q.user_id WHERE q.trigger->>'kind' = 'mapping' ORDER BY u.user_name`,
    );
    await worker.start();
    // Analysts-EU's members (analyst-only@, deleted-behind@) and every user with a platform account
    // (db/mapping/stateRepository.ts `listUsersToRederive`); never the groupless user without one.
    expect(marked.map((r) => r.user_name)).toEqual([
      "adopt-diff@example.com",
      "adopt-same@example.com",
      "analyst-only@example.com",
      "deleted-behind@example.com",
      "dropped@example.com",
      "new-name@example.com",
      "rate-limited@example.com",
      "timed-out@example.com",
    ]);
    expect(await accountsNamed(stack, groupless)).toEqual([]);
    await eventually(
      "the analyst's new permission",
      async () =>
        (await accountsNamed(stack, analyst))[0]!.permissions.appGroup[0]!.appGroupPermissions.includes("basic_access"),
      { timeoutMs: 20_000 },
    );
    await waitForQueueIdle(stack, { deferred: "wait" });

    // Only the analyst's desired user changed: deleted-behind@ is in Analysts-EU too and was
    // marked, but Marketing already gives it basic_access, so it costs nothing.
    expect(await delta(before)).toEqual({ post: 0, lookup: 0, put: 1 });
    const mappingEntries: (LogEntry & { userName: string })[] = (
      await adminApi(stack)("/log?trigger=mapping&limit=100")
    ).body.entries;
    expect(mappingEntries.map((e) => e.userName)).toEqual([analyst]);
    expect(mappingEntries[0]).toMatchObject({ action: "update", outcome: "succeeded", callsSpent: 1 });
    // The trigger names the rule that changed, as the file said it then (the log page words it).
    const ruleLine = TEST_MAPPING.split("\n").findIndex((l) => l.includes('groupPattern: "^Analysts-"')) + 1;
    expect(mappingEntries[0]!.trigger).toMatchObject({
      kind: "mapping",
      rules: [{ line: ruleLine, name: "groups matching ^Analysts-" }],
    });
    expect(mappingEntries[0]!.changes).toEqual([
      { kind: "permissions", path: "workspaces[EU Production].permissions", added: ["basic_access"], removed: [] },
    ]);
    // Everyone else is exactly as before.
    const usersAfter = (await emulatorState(stack)).dashboardUsers.filter((u) => u.userName !== analyst);
    expect(usersAfter).toEqual(usersBefore);
  });

  it("no fault is left behind", async () => {
    expect((await request(stack.emulator.url).get("/_emulator/faults")).body.faults).toEqual([]);
    await clearFaults(stack.emulator.url);
  });
});
