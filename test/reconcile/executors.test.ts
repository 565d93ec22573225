import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/clock.js";
import { getAccount } from "../../src/db/platform/accountRepository.js";
import { listLog } from "../../src/db/reconcile/logRepository.js";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.js";
import type { DesiredDashboardUser } from "../../src/mapping/types.js";
import { PlatformScimClient } from "../../src/platform/scim.js";
import { HttpTransport, noRetry } from "../../src/platform/transport.js";
import { budgetPolicy } from "../../src/reconcile/budget/budget.js";
import { diffDashboardUsers } from "../../src/reconcile/diff.js";
import { RemovalExecutors } from "../../src/reconcile/execute/removals.js";
import { WriteExecutors } from "../../src/reconcile/execute/writes.js";
import { PassTools, type ReconcilePass } from "../../src/reconcile/pass.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";
import { emulatorDump } from "../support/emulator.js";
import { MARKETING_WORKSPACE } from "./helpers.js";

/**
 * Each family of executors alone, on the shared tools it is given: no Reconciler, no planner, no
 * worker. What a create and a guarded delete leave on the platform (the emulator over HTTP), in
 * platform_accounts and in the log.
 */

let database: TestDatabase;
let emulator: RunningEmulator;
let writes: WriteExecutors;
let removals: RemovalExecutors;
const clock = new ManualClock();

beforeAll(async () => {
  database = await createTestDatabase();
  emulator = await startEmulator({ port: 0, clock });
  const platform = new PlatformScimClient({
    transport: new HttpTransport({ baseUrl: emulator.url, timeoutMs: 5_000, retry: noRetry, clock }),
    scimToken: "dev-scim-token",
    requestOrigin: "scim-connector-test",
  });
  const tools = new PassTools({
    db: database.db,
    clock,
    platform,
    source: {
      load: () =>
        Promise.reject(new Error("an executor acts on the plan it is given; it never reads the desired state")),
    },
    budget: budgetPolicy(1_000, 10, "utc-day"),
    policies: { onEmailChange: "hold", deprovisionGraceMs: 0, onAdoptedDeprovision: "strip" },
    breaker: { minimum: 100, percent: 100 },
    drift: "report",
  });
  writes = new WriteExecutors(tools);
  removals = new RemovalExecutors(tools, writes);
});

afterAll(async () => {
  await emulator?.close();
  await database?.drop();
});

const grace: DesiredDashboardUser = {
  userName: "grace@example.com",
  givenName: "Grace",
  familyName: "Hopper",
  department: "marketing",
  companyPermissions: [],
  workspaces: [{ ...MARKETING_WORKSPACE, appGroupPermissionSets: [] }],
};

function passFor(userId: string, before: DesiredDashboardUser | null): ReconcilePass {
  return {
    userId,
    reconcileId: randomUUID(),
    resyncRunId: null,
    trigger: { kind: "idp" },
    actor: null,
    userName: grace.userName,
    before,
    calls: 0,
    lastStatus: null,
    queuedAt: null,
  };
}

describe("the executors, each on its own", () => {
  const userId = randomUUID();

  it("WriteExecutors.create: one POST; the account is recorded as applied and the log says what was created", async () => {
    const result = await writes.create(passFor(userId, null), grace, diffDashboardUsers(null, grace));

    expect(result).toEqual({ kind: "done" });
    const onPlatform = (await emulatorDump(emulator.url)).dashboardUsers.filter((u) => u.userName === grace.userName);
    expect(onPlatform).toHaveLength(1);
    const account = await getAccount(database.db, userId);
    expect(account).toMatchObject({ state: "active", platformId: onPlatform[0]!.id, lastApplied: grace });
    const [entry] = (await listLog(database.db, { user: userId })).entries;
    expect(entry).toMatchObject({ action: "create", outcome: "succeeded", callsSpent: 1, after: grace });
  });

  it("RemovalExecutors.deprovisionGuarded below the breaker: one DELETE; the account is forgotten and the log says why", async () => {
    const { platformId } = (await getAccount(database.db, userId))!;

    const result = await removals.deprovisionGuarded(
      passFor(userId, grace),
      platformId!,
      diffDashboardUsers(grace, null),
      undefined,
      "idp-deleted",
    );

    expect(result).toEqual({ kind: "done" });
    const onPlatform = (await emulatorDump(emulator.url)).dashboardUsers.filter((u) => u.userName === grace.userName);
    expect(onPlatform).toEqual([]);
    expect(await getAccount(database.db, userId)).toBeUndefined();
    const [entry] = (await listLog(database.db, { user: userId })).entries;
    expect(entry).toMatchObject({
      action: "deprovision",
      outcome: "succeeded",
      callsSpent: 1,
      note: "deleted in the IdP: account deleted at once",
    });
  });
});
