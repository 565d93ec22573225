import request from "supertest";
import { afterEach, describe, expect, it, vi } from "vitest";
import { loadEnv } from "../../src/config/env.js";
import { startService, type Service } from "../../src/service.js";
import { addFault, clearFaults, emulatorDump, ledgerDebits } from "../support/emulator.js";
import { claimedWork, quarantineMetric, waitForAdmissions, watchAdmissions } from "./quarantineWatch.js";
import {
  ADMIN_TOKEN,
  IDP_TOKEN,
  adminApi,
  emulatorState,
  emulatorStats,
  idp,
  startStack,
  waitForQueueIdle,
  type Stack,
} from "../support/stack.js";
import { eventually } from "../support/wait.js";

/**
 * The quarantine is shared state: a family one replica quarantines is paused on every replica
 * (a second service on the same database claims nothing), and the mirror sync's REST families
 * are quarantined and resumed like the SCIM family.
 */

let stack: Stack | undefined;
let second: Service | undefined;
afterEach(async () => {
  await second?.close();
  second = undefined;
  await stack?.close();
  stack = undefined;
});

async function count(s: Stack, sql: string): Promise<number> {
  const rows: { n: number }[] = await s.database.db.query(sql);
  return rows[0]!.n;
}
const families = async (url: string) =>
  (await request(url).get("/admin/api/quarantine").set("Authorization", `Bearer ${ADMIN_TOKEN}`)).body.families as {
    family: string;
    reason: string;
  }[];

describe("shared quarantine", () => {
  it("one replica's discovery pauses another replica on the same database; resuming on either resumes both", async () => {
    stack = await startStack({ env: { QUARANTINE_COOLING_SECONDS: "3600" } });
    const s = stack;
    await addFault(s.emulator.url, { path: "/scim/v2", status: 401 });
    const client = idp(s);
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push(await client.createUser(`r${i}@example.com`));
    await client.createGroup("Marketing", ids);
    await eventually("the first replica to quarantine scim", async () => (await families(s.service.url)).length > 0, {
      timeoutMs: 45_000,
    });

    // A second replica starts with its own workers, and learns of the quarantine from the table.
    second = await startService({
      env: loadEnv({
        PORT: "0",
        HOST: "127.0.0.1",
        SCIM_TOKEN: IDP_TOKEN,
        ADMIN_TOKEN,
        MAPPING_FILE: s.mappingFile,
        RECONCILE_POLL_MS: "100",
        RECONCILE_SETTLE_MS: "0",
        QUARANTINE_COOLING_SECONDS: "3600",
      }),
      databaseUrl: s.database.url,
      platform: {
        url: s.emulator.url,
        scimToken: "dev-scim-token",
        apiKey: "dev-api-key",
        requestOrigin: "scim-connector-test",
      },
    });
    // Paused on the second replica, from its own state: the record, the metric, and its gate
    // refusing each of its workers' passes while neither the ledger nor the queue moves.
    expect(await families(second.url)).toMatchObject([{ family: "scim", reason: "auth" }]);
    expect((await request(second.url).get("/metrics")).text).toContain(quarantineMetric("scim"));
    const gate = watchAdmissions(second.quarantine, "scim");
    await vi.waitFor(async () => expect((await claimedWork(s.database.db)).reconciles).toBe(0), { timeout: 30_000 });
    await waitForAdmissions(gate, 1);
    const spent = await ledgerDebits(s.database.db);
    const queued = await count(s, `SELECT count(*)::int AS n FROM reconcile_queue`);
    await waitForAdmissions(gate, 6);
    gate.restore();
    expect(new Set(gate.answers)).toEqual(new Set(["closed"]));
    expect(await ledgerDebits(s.database.db)).toBe(spent);
    expect(await count(s, `SELECT count(*)::int AS n FROM reconcile_queue`)).toBe(queued);
    expect(queued).toBeGreaterThan(0);

    await clearFaults(s.emulator.url);
    expect(
      (
        await request(second.url)
          .post("/admin/api/quarantine/scim/resume")
          .set("Authorization", `Bearer ${ADMIN_TOKEN}`)
      ).status,
    ).toBe(200);
    await waitForQueueIdle(s, { timeoutMs: 60_000 });
    const users = (await emulatorState(s)).dashboardUsers.filter((u) => u.userName.startsWith("r"));
    expect(users).toHaveLength(10);
    expect(await families(s.service.url)).toEqual([]);
  });

  it("the mirror sync's email family: 503s quarantine it, changes stay pending, a resume pushes them", async () => {
    stack = await startStack({ env: { QUARANTINE_COOLING_SECONDS: "3600" } });
    const s = stack;
    await addFault(s.emulator.url, { path: "/email/status", status: 503 });
    await s.database.db.query(
      `INSERT INTO mirror.email_subscription_states (email, subscription_state) SELECT 'm' || i || '@example.com', 'subscribed' FROM generate_series(1, 30) AS i`,
    );
    const [family] = await eventually(
      "the email family's quarantine",
      async () => {
        const list = await families(s.service.url);
        return list.length > 0 && list;
      },
      { timeoutMs: 45_000 },
    );
    expect(family).toMatchObject({ family: "email.status", reason: "failure_rate" });
    const pending = `SELECT count(*)::int AS n FROM mirror_sync.pending WHERE kind = 'email'`;
    expect(await count(s, pending)).toBe(30); // nothing lost
    // Paused, from the connector's own state: the metric, and the mirror worker's gate refusing its
    // cycles once no claim is live, while the changes stay pending and unclaimed.
    expect((await request(s.service.url).get("/metrics")).text).toContain(quarantineMetric("email.status"));
    const gate = watchAdmissions(s.service.quarantine, "email.status");
    await vi.waitFor(async () => expect((await claimedWork(s.database.db)).mirror).toBe(0), { timeout: 30_000 });
    await waitForAdmissions(gate, 1);
    const sent = (await emulatorStats(s)).requests["POST /email/status"] ?? 0;
    await waitForAdmissions(gate, 2);
    gate.restore();
    expect(new Set(gate.answers)).toEqual(new Set(["closed"]));
    expect(await claimedWork(s.database.db)).toMatchObject({ mirror: 0 });
    expect(await count(s, pending)).toBe(30);
    expect((await emulatorStats(s)).requests["POST /email/status"] ?? 0).toBe(sent);

    await clearFaults(s.emulator.url);
    expect((await adminApi(s)("/quarantine")).body.families).toHaveLength(1);
    const resumed = await request(s.service.url)
      .post(`/admin/api/quarantine/${encodeURIComponent("email.status")}/resume`)
      .set("Authorization", `Bearer ${ADMIN_TOKEN}`);
    expect(resumed.status).toBe(200);
    await eventually("the pending emails to be pushed", async () => (await count(s, pending)) === 0, {
      timeoutMs: 45_000,
    });
    const state = await emulatorDump(s.emulator.url);
    expect(Object.keys(state.emailStates).filter((e) => e.startsWith("m"))).toHaveLength(30);
  });
});
