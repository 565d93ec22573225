import request from "supertest";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { DashboardUser } from "../../src/emulator/dashboard/users.js";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.js";
import { freePort } from "../../src/db/embedded.js";
import { spawnConnector, type ConnectorProcess } from "../support/connectorProcess.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";
import { ADMIN_TOKEN, IDP_TOKEN, writeMappingFile } from "../support/stack.js";
import { addFault, emulatorCounts, emulatorDump, ledgerDebits, requestTimes } from "../support/emulator.js";
import { accountShape, type AccountShape } from "../support/faultWorld.js";
import { waitForQueueIdle } from "../support/queue.js";

/**
 * The connector as a real child process, SIGKILLed in the middle of reconcile bursts (every
 * platform call is slowed down so some are in flight), then restarted. Afterwards the platform
 * must hold exactly one account per entitled user with exactly the desired permissions, nothing
 * the IdP said may be lost, and nothing may have reached the platform without a ledger debit.
 */

const BUDGET = 500;
/** How long the emulator holds every platform SCIM call before answering it. */
const CALL_DELAY_MS = 250;

type Expected = AccountShape | null;

const MARKETING: Expected = {
  department: "marketing",
  companyPermissions: [],
  workspaces: [
    {
      name: "EU Production",
      permissions: ["basic_access", "send_campaigns_canvases"],
      teams: ["Lifecycle:basic_access"],
    },
  ],
};
const MARKETING_ANALYST: Expected = {
  department: "marketing",
  companyPermissions: [],
  workspaces: [
    {
      name: "EU Production",
      permissions: ["basic_access", "export_user_data", "send_campaigns_canvases"],
      teams: ["Lifecycle:basic_access"],
    },
  ],
};
const ADMIN: Expected = { department: "engineering", companyPermissions: ["admin"], workspaces: [] };

describe("SIGKILL in the middle of a reconcile burst", () => {
  let database: TestDatabase;
  let emulator: RunningEmulator;
  let mappingFile: string;
  let port: number;
  let connector: ConnectorProcess | undefined;
  const url = () => `http://127.0.0.1:${port}`;
  const killMoments: number[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    emulator = await startEmulator();
    mappingFile = await writeMappingFile();
    port = await freePort();
    // Every platform SCIM call takes a while, so a kill lands with calls in flight.
    await addFault(emulator.url, { path: "/scim/v2/Users", delayMs: CALL_DELAY_MS });
  });
  afterAll(async () => {
    await connector?.kill("SIGKILL");
    await emulator?.close();
    await database?.drop();
  });

  async function startConnector(): Promise<void> {
    connector = await spawnConnector(
      {
        DATABASE_URL: database.url,
        PLATFORM_URL: emulator.url,
        PLATFORM_SCIM_TOKEN: "dev-scim-token",
        PLATFORM_REQUEST_ORIGIN: "x",
        PLATFORM_SCIM_DAILY_BUDGET: String(BUDGET),
        SCIM_TOKEN: IDP_TOKEN,
        ADMIN_TOKEN,
        MAPPING_FILE: mappingFile,
        RECONCILE_WORKERS: "3",
        RECONCILE_POLL_MS: "100",
      },
      port,
    );
  }

  /**
   * Kills the connector at a random moment of the burst that was just pushed, at the first poll
   * from then on that sees a platform call in flight; returns when it is gone. If the burst is
   * nearly drained before that moment (a loaded machine), it kills at the first such poll, so that
   * every trial kills with work still queued and calls in flight, which the emulator then confirms.
   */
  async function killMidBurst(maxDelayMs = 1000): Promise<void> {
    const target = Date.now() + 50 + Math.floor(Math.random() * (maxDelayMs - 50));
    const started = Date.now();
    let queued = 0;
    await vi.waitFor(
      async () => {
        const rows: { n: number }[] = await database.db.query(`SELECT count(*)::int AS n FROM reconcile_queue`);
        queued = rows[0]!.n;
        if (Date.now() < target && queued > 2) throw new Error("not yet the moment to kill");
        // A call that arrived within the last 100 ms is held by the emulator for 150 ms more at least.
        const recent = await requestTimes(emulator.url, new Date(Date.now() - 100), " /scim/v2/Users");
        if (!recent.length) throw new Error("no platform call in flight at the moment to kill");
      },
      { timeout: maxDelayMs + 5_000, interval: 20 },
    );
    killMoments.push(Date.now() - started);
    const killedAt = Date.now();
    await connector!.kill("SIGKILL");
    connector = undefined;
    expect(queued, "work was still queued when the connector was killed").toBeGreaterThan(0);
    // From the emulator's arrival times (same process, same clock): a SCIM call that arrived less
    // than CALL_DELAY_MS before the kill was still held by the emulator, unanswered, when it came.
    const arrivals = await requestTimes(emulator.url, new Date(killedAt - CALL_DELAY_MS), " /scim/v2/Users");
    expect(
      arrivals.filter((t) => t > killedAt - CALL_DELAY_MS && t <= killedAt).length,
      "platform calls in flight when the connector was killed",
    ).toBeGreaterThan(0);
  }

  const scim = (method: "get" | "post" | "patch", p: string, body?: unknown) => {
    const req = request(url())[method](`/scim/v2${p}`).set("Authorization", `Bearer ${IDP_TOKEN}`);
    return body === undefined ? req : req.set("Content-Type", "application/scim+json").send(JSON.stringify(body));
  };
  const ids: string[] = [];
  const groups: Record<string, string> = {};
  const userName = (i: number) => `crash${String(i).padStart(2, "0")}@example.com`;

  async function createUsers(from: number, to: number): Promise<void> {
    for (let i = from; i < to; i++) {
      const res = await scim("post", "/Users", {
        schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
        userName: userName(i),
        name: { givenName: `U${i}`, familyName: "Crash" },
        active: true,
      });
      expect(res.status, res.text).toBe(201);
      ids[i] = res.body.id;
    }
  }
  async function createGroup(name: string, members: number[]): Promise<void> {
    const res = await scim("post", "/Groups", {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
      displayName: name,
      members: members.map((i) => ({ value: ids[i] })),
    });
    expect(res.status, res.text).toBe(201);
    groups[name] = res.body.id;
  }
  async function patch(p: string, operations: unknown[]): Promise<void> {
    const res = await scim("patch", p, {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
      Operations: operations,
    });
    expect(res.status, res.text).toBeLessThan(300);
  }
  const range = (a: number, b: number) => Array.from({ length: b - a }, (_, k) => a + k);

  async function restartAndSettle(): Promise<void> {
    await startConnector();
    await waitForQueueIdle(database.db, { deferred: "wait", timeoutMs: 90_000 });
  }

  async function assertWorld(expected: (i: number) => Expected, count: number): Promise<void> {
    const state = await emulatorDump(emulator.url);
    const byName = new Map<string, DashboardUser[]>();
    for (const u of state.dashboardUsers)
      byName.set(u.userName.toLowerCase(), [...(byName.get(u.userName.toLowerCase()) ?? []), u]);
    for (const [name, accounts] of byName) expect(accounts, `accounts for ${name}`).toHaveLength(1);
    for (let i = 0; i < count; i++) {
      const want = expected(i);
      const got = byName.get(userName(i))?.[0];
      if (!want) expect(got, `${userName(i)} should have no account`).toBeUndefined();
      else expect(got && accountShape(got), userName(i)).toEqual(want);
    }
    expect(state.dashboardUsers.length).toBe(range(0, count).filter((i) => expected(i) !== null).length);

    const stats = await emulatorCounts(emulator.url);
    const debits = await ledgerDebits(database.db);
    expect(stats.scimDaily.used, "nothing reached the platform without a debit").toBeLessThanOrEqual(debits);
    expect(debits).toBeLessThanOrEqual(BUDGET);
    const parked: { n: number }[] = await database.db.query(`SELECT count(*)::int AS n FROM reconcile_queue`);
    expect(parked[0]!.n).toBe(0);
  }

  it("trial 1: killed while creating 40 users; after a restart each has exactly one account", async () => {
    await startConnector();
    await createUsers(0, 40);
    await createGroup("Marketing", range(0, 40));
    await killMidBurst();
    await restartAndSettle();
    await assertWorld(() => MARKETING, 40);
  });

  it("trial 2: killed while applying membership changes; no change is lost", async () => {
    await createGroup("Analysts-EU", range(0, 10));
    await patch(
      `/Groups/${groups["Marketing"]}`,
      range(10, 15).map((i) => ({ op: "remove", path: `members[value eq "${ids[i]}"]` })),
    );
    await createGroup("Platform Admins", range(10, 15));
    await killMidBurst();
    await restartAndSettle();
    await assertWorld((i) => (i < 10 ? MARKETING_ANALYST : i < 15 ? ADMIN : MARKETING), 40);
  });

  it("trial 3: killed while deprovisioning and creating; the end state is exact and the budget was never overspent", async () => {
    await createUsers(40, 50);
    await Promise.all([
      ...range(15, 20).map((i) => patch(`/Users/${ids[i]}`, [{ op: "replace", value: { active: false } }])),
      patch(`/Groups/${groups["Marketing"]}`, [
        { op: "add", path: "members", value: range(40, 50).map((i) => ({ value: ids[i] })) },
      ]),
    ]);
    await killMidBurst(600);
    await restartAndSettle();
    const expected = (i: number): Expected => (i < 10 ? MARKETING_ANALYST : i < 15 ? ADMIN : i < 20 ? null : MARKETING);
    await assertWorld(expected, 50);

    // One POST per account ever created: an uncertain create was resolved by lookup, never re-sent blindly.
    const stats = await emulatorCounts(emulator.url);
    expect(stats.requests["POST /scim/v2/Users"]).toBe(50);
    const log = await request(url())
      .get("/admin/api/log?outcome=failed&limit=1000")
      .set("Authorization", `Bearer ${ADMIN_TOKEN}`);
    expect(log.body.entries).toEqual([]);
    console.info(
      `crash trials: killed ${killMoments.join(" ms, ")} ms into the bursts; ${await ledgerDebits(database.db)} debits, ${stats.requests["GET /scim/v2/Users"] ?? 0} lookups of uncertain creates`,
    );
    await connector!.kill("SIGTERM");
  });
});
