import request from "supertest";
import { afterEach, describe, expect, it, vi } from "vitest";
import { addFault, clearFaults, ledgerDebits } from "../support/emulator.js";
import { claimedWork, quarantineMetric, waitForAdmissions, watchAdmissions } from "./quarantineWatch.js";
import {
  ADMIN_TOKEN,
  adminApi,
  emulatorState,
  idp,
  startStack,
  waitForQueueIdle,
  type Stack,
} from "../support/stack.js";
import { eventually } from "../support/wait.js";

/**
 * Quarantine end to end: the emulator refuses the SCIM family (401) or fails it (503); the
 * connector pauses SCIM work on its own, spends nothing while paused, keeps the queue, and
 * converges once the platform is healthy and the quarantine lifts (admin resume, or cooling
 * then a successful probe).
 */

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const USERS = 12;

async function queued(s: Stack): Promise<number> {
  const rows: { n: number }[] = await s.database.db.query(
    `SELECT count(*)::int AS n FROM reconcile_queue WHERE parked_at IS NULL`,
  );
  return rows[0]!.n;
}

type Family = { family: string; state: string; reason: string; failedProbes: number };
async function quarantined(s: Stack): Promise<Family[]> {
  const res = await adminApi(s)("/quarantine");
  expect(res.status).toBe(200);
  return res.body.families as Family[];
}
async function provision(s: Stack): Promise<void> {
  const client = idp(s);
  const ids: string[] = [];
  for (let i = 0; i < USERS; i++) ids.push(await client.createUser(`q${i}@example.com`));
  await client.createGroup("Marketing", ids);
}

/**
 * Paused, from the connector's own state: the quarantine metric, every worker pass refused by the
 * gate once nothing is claimed any more, and neither the ledger nor the queue moving across passes.
 */
async function expectPaused(s: Stack): Promise<void> {
  expect((await request(s.service.url).get("/metrics")).text).toContain(quarantineMetric("scim"));
  const gate = watchAdmissions(s.service.quarantine, "scim");
  try {
    // Reconciles claimed before the quarantine finish; after that the gate lets no new claim through.
    await vi.waitFor(async () => expect((await claimedWork(s.database.db)).reconciles).toBe(0), { timeout: 30_000 });
    await waitForAdmissions(gate, 1);
    const spent = await ledgerDebits(s.database.db);
    const waiting = await queued(s);
    await waitForAdmissions(gate, 6); // two passes of each of the three loops
    expect(new Set(gate.answers)).toEqual(new Set(["closed"]));
    expect(await ledgerDebits(s.database.db)).toBe(spent);
    expect(await queued(s)).toBe(waiting);
    expect(waiting).toBeGreaterThan(0); // the work waits in the queue
  } finally {
    gate.restore();
  }
}

async function expectConverged(s: Stack): Promise<void> {
  await waitForQueueIdle(s, { timeoutMs: 60_000 });
  const users = (await emulatorState(s)).dashboardUsers.filter((u) => u.userName.startsWith("q"));
  expect(users.map((u) => u.userName).sort()).toEqual(
    Array.from({ length: USERS }, (_, i) => `q${i}@example.com`).sort(),
  );
  expect(await quarantined(s)).toEqual([]);
}

describe("platform quarantine", () => {
  it("sustained 401s quarantine the SCIM family; nothing is spent or lost; an admin resumes it and the queue converges", async () => {
    stack = await startStack({ env: { QUARANTINE_COOLING_SECONDS: "3600" } });
    const s = stack;
    await addFault(s.emulator.url, { path: "/scim/v2", status: 401 });
    await provision(s);

    const [family] = await eventually(
      "the quarantine",
      async () => (await quarantined(s)).length > 0 && quarantined(s),
    );
    expect(family).toMatchObject({ family: "scim", state: "cooling", reason: "auth" });
    await expectPaused(s);

    // The overview shows the panel with a resume button (admin); the UI action lifts it.
    const agent = request.agent(s.service.url);
    const login = await agent.get("/admin/login");
    const csrf = /name="_csrf" value="([^"]+)"/.exec(login.text)![1]!;
    await agent.post("/admin/login").type("form").send({ _csrf: csrf, token: ADMIN_TOKEN });
    const page = await agent.get("/admin");
    expect(page.text).toContain("Platform quarantine");
    expect(page.text).toContain("credentials refused");
    expect(page.text).toContain('action="/admin/quarantine/scim/resume"');

    await clearFaults(s.emulator.url);
    const pageCsrf = /name="_csrf" value="([^"]+)"/.exec(page.text)![1]!;
    const resumed = await agent.post("/admin/quarantine/scim/resume").type("form").send({ _csrf: pageCsrf });
    expect(resumed.status).toBe(303);
    const forged = await agent.post("/admin/quarantine/scim/resume").type("form").send({ _csrf: "forged" });
    expect(forged.status).toBe(403);
    await expectConverged(s);

    // The admin API answers 404 for a family that is not quarantined.
    const again = await request(s.service.url)
      .post("/admin/api/quarantine/scim/resume")
      .set("Authorization", `Bearer ${ADMIN_TOKEN}`);
    expect(again.status).toBe(404);
  });

  it("after the cooling period one probe decides: a failing probe extends it, a healthy one lifts it", async () => {
    stack = await startStack({ env: { QUARANTINE_COOLING_SECONDS: "1" } });
    const s = stack;
    await addFault(s.emulator.url, { path: "/scim/v2", status: 403 });
    await provision(s);
    await eventually("the quarantine", async () => (await quarantined(s)).length > 0);
    const failed = await eventually("a failed probe", async () =>
      (await quarantined(s)).find((f) => f.failedProbes >= 2),
    );
    expect(failed.reason).toBe("auth");
    // Each probe is one call: two failed probes cost at most a few calls, not a reconcile pass each second.
    const spentWhileQuarantined = await ledgerDebits(s.database.db);
    await eventually("a third failed probe", async () => (await quarantined(s)).find((f) => f.failedProbes >= 3));
    expect((await ledgerDebits(s.database.db)) - spentWhileQuarantined).toBeLessThanOrEqual(3);

    await clearFaults(s.emulator.url);
    await expectConverged(s);
  });

  it("a failure rate over the threshold (503s) quarantines the family; the admin API resumes it", async () => {
    stack = await startStack({ env: { QUARANTINE_COOLING_SECONDS: "3600" } });
    const s = stack;
    await addFault(s.emulator.url, { path: "/scim/v2", status: 503, probability: 0.8 });
    await provision(s);
    const [family] = await eventually(
      "the quarantine",
      async () => (await quarantined(s)).length > 0 && quarantined(s),
    );
    expect(family).toMatchObject({ family: "scim", reason: "failure_rate" });
    await expectPaused(s);

    await clearFaults(s.emulator.url);
    const res = await request(s.service.url)
      .post("/admin/api/quarantine/scim/resume")
      .set("Authorization", `Bearer ${ADMIN_TOKEN}`);
    expect(res.status).toBe(200);
    await expectConverged(s);
  });
});
