import request from "supertest";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.js";
import { spawnConnector, type ConnectorProcess } from "../support/connectorProcess.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";
import { emulatorCounts, emulatorDump, ledgerDebits } from "../support/emulator.js";
import { ADMIN_TOKEN, IDP_TOKEN, writeMappingFile } from "../support/stack.js";

/**
 * Three connector processes on one database, with a cron that fires every minute, live SCIM
 * changes sent to all three, and a verifying resync: each queue row is worked once (no duplicate
 * platform calls), the cron fires once, and the platform ends exactly right.
 */
const USERS = 45;

describe("three replicas on one database", () => {
  let database: TestDatabase;
  let emulator: RunningEmulator;
  const replicas: ConnectorProcess[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    emulator = await startEmulator();
    const mappingFile = await writeMappingFile();
    const env = {
      DATABASE_URL: database.url,
      PLATFORM_URL: emulator.url,
      PLATFORM_SCIM_TOKEN: "dev-scim-token",
      PLATFORM_REQUEST_ORIGIN: "replica-test",
      SCIM_TOKEN: IDP_TOKEN,
      ADMIN_TOKEN,
      MAPPING_FILE: mappingFile,
      RECONCILE_WORKERS: "2",
      RECONCILE_POLL_MS: "100",
      RESYNC_CRON: "* * * * *",
      RESYNC_VERIFY: "true",
      SCHEDULER_TICK_MS: "200",
    };
    // Started one after the other: the first applies the migrations.
    for (let i = 0; i < 3; i++) replicas.push(await spawnConnector(env));
  }, 180_000);
  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.kill("SIGKILL")));
    await emulator?.close();
    await database?.drop();
  });

  const scim = (i: number, method: "post" | "patch", p: string, body: unknown) =>
    request(replicas[i % 3]!.url)
      [method](`/scim/v2${p}`)
      .set("Authorization", `Bearer ${IDP_TOKEN}`)
      .set("Content-Type", "application/scim+json")
      .send(JSON.stringify(body));

  it("work is done once, the cron fires once, and the platform ends right", async () => {
    const ids: string[] = [];
    await Promise.all(
      Array.from({ length: USERS }, async (_, i) => {
        const res = await scim(i, "post", "/Users", {
          schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
          userName: `r${i}@example.com`,
          name: { givenName: `R${i}`, familyName: "Replica" },
          active: true,
        });
        expect(res.status, res.text).toBe(201);
        ids[i] = res.body.id;
      }),
    );
    const group = await scim(0, "post", "/Groups", {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
      displayName: "Marketing",
      members: [],
    });
    const groupId = group.body.id as string;
    // Members added by 15 concurrent PATCHes spread over the three replicas.
    await Promise.all(
      Array.from({ length: 15 }, (_, k) =>
        scim(k, "patch", `/Groups/${groupId}`, {
          schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
          Operations: [{ op: "add", path: "members", value: ids.slice(k * 3, k * 3 + 3).map((value) => ({ value })) }],
        }),
      ),
    );

    // Wait for the cron to fire (the next whole minute), with live changes during the run.
    let runs: { runId: string; trigger: string; status: string; progress: { verified: number } }[] = [];
    let deactivated = false;
    let pending = -1;
    await vi
      .waitFor(
        async () => {
          runs = (await request(replicas[1]!.url).get("/admin/api/runs").set("Authorization", `Bearer ${ADMIN_TOKEN}`))
            .body.runs;
          if (runs.some((r) => r.trigger === "cron") && !deactivated) {
            deactivated = true;
            await Promise.all(
              ids.slice(0, 5).map((id, i) =>
                scim(i, "patch", `/Users/${id}`, {
                  schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
                  Operations: [{ op: "replace", value: { active: false } }],
                }),
              ),
            );
          }
          pending = ((await database.db.query(`SELECT count(*)::int AS n FROM reconcile_queue`)) as { n: number }[])[0]!
            .n;
          if (!(deactivated && runs.every((r) => r.status !== "running") && pending === 0))
            throw new Error("not settled yet");
        },
        { timeout: 90_000, interval: 250 },
      )
      .catch(() => {
        throw new Error(
          `not settled: runs ${JSON.stringify(runs)}, pending ${pending}\n${replicas[0]!.output().slice(-1500)}`,
        );
      });

    const slots: { n: number }[] = await database.db.query(`SELECT count(*)::int AS n FROM resync_schedule`);
    const cronRuns = runs.filter((r) => r.trigger === "cron");
    expect(cronRuns.length).toBe(slots[0]!.n); // one run per slot...
    const perSlot: { n: number }[] = await database.db.query(
      `SELECT count(*)::int AS n FROM resync_runs WHERE trigger = 'cron' GROUP BY date_trunc('minute', started_at) HAVING count(*) > 1`,
    );
    expect(perSlot).toEqual([]); // ...and never two for one minute
    expect(cronRuns.every((r) => r.status === "succeeded")).toBe(true);

    const state = await emulatorDump(emulator.url);
    const names = state.dashboardUsers.map((u) => u.userName).sort();
    expect(names).toEqual(Array.from({ length: USERS - 5 }, (_, i) => `r${i + 5}@example.com`).sort());
    for (const user of state.dashboardUsers)
      expect(user.permissions.appGroup[0]!.appGroupPermissions).toEqual(["basic_access", "send_campaigns_canvases"]);

    // No duplicate calls: one POST per account ever created, one DELETE per deactivation, and every
    // call the platform saw was debited once in the shared ledger.
    const stats = await emulatorCounts(emulator.url);
    const [created] = await database.db.query(
      `SELECT count(*)::int AS n, count(DISTINCT lower(user_name))::int AS users FROM reconcile_log WHERE action = 'create' AND outcome = 'succeeded'`,
    );
    const [removed] = await database.db.query(
      `SELECT count(*)::int AS n FROM reconcile_log WHERE action = 'deprovision' AND outcome = 'succeeded'`,
    );
    expect(stats.requests["POST /scim/v2/Users"]).toBe(created.n);
    expect(created.n).toBe(created.users); // never two creates for one user
    // Users deactivated before their account was made need no call at all.
    expect(created.n - removed.n).toBe(USERS - 5);
    expect(stats.requests["DELETE /scim/v2/Users/{id}"] ?? 0).toBe(removed.n);
    expect(stats.scimDaily.used).toBe(await ledgerDebits(database.db));
    const verifications: { n: number }[] = await database.db.query(
      `SELECT count(*)::int AS n FROM budget_debits WHERE action = 'verify'`,
    );
    expect(stats.requests["GET /scim/v2/Users/{id}"] ?? 0).toBe(verifications[0]!.n);
  }, 240_000);
});
