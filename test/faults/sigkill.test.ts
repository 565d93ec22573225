import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.js";
import { spawnConnector, type ConnectorProcess } from "../support/connectorProcess.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";
import { EtlWriter, IdpModel, ResilientIdp, waitForQuiet, worldProblems } from "../support/faultWorld.js";
import { addFault, emulatorCounts, ledgerDebits } from "../support/emulator.js";
import { ADMIN_TOKEN, IDP_TOKEN, TEST_MAPPING } from "../support/stack.js";

/**
 * The connector (a child process) SIGKILLed mid-work, TRIALS times in a row (20 unless
 * SIGKILL_TRIALS says otherwise; with the 3 kills of test/reconcile/crash.test.ts, 23 kills of the
 * reconciler per run, as docs/ARCHITECTURE.md states).
 * In each trial the IdP pushes a burst of changes (creates, group moves, deactivations and
 * reactivations), the workers reconcile them and the ETL keeps writing mirror rows, all at once.
 * The kill moment is chosen from the observed state: from a random moment on, the first poll that
 * sees the IdP pushing, reconciles queued and mirror changes pending; a trial in which that never
 * happens fails. The IdP re-sends what got no answer, as Okta and Entra do.
 * After a restart every trial must end with the platform exactly as desired, one account per
 * user, no platform call without a debit, no debit beyond the budget, and every mirror email
 * state on the platform with its latest value.
 */

const TRIALS = Number(process.env.SIGKILL_TRIALS ?? 20);
const BUDGET = 2_000;

/** What a trial's kill met: the IdP pushing, and the reconciles and mirror changes waiting. */
type MidWork = {
  killed: boolean;
  killAtMs: number;
  idpPushing: boolean;
  queued: number;
  mirrorPending: number;
  /** Measured after the kill: what the restarted connector was left to finish. */
  queuedAfterKill: number;
  mirrorAfterKill: number;
};

describe(`SIGKILL mid-work, ${TRIALS} trials`, () => {
  let database: TestDatabase;
  let emulator: RunningEmulator;
  let dir: string;
  let env: Record<string, string>;
  let connector: ConnectorProcess | undefined;
  let lastUrl = "";
  let idp: ResilientIdp;
  let etl: EtlWriter;
  const model = new IdpModel();
  const figures: (MidWork & { settleMs: number })[] = [];
  const emails = Array.from({ length: 300 }, (_, i) => `kill${i}@example.com`);
  const GROUPS = ["Marketing", "Analysts-EU", "Platform Admins"];

  beforeAll(async () => {
    database = await createTestDatabase();
    emulator = await startEmulator();
    dir = await mkdtemp(path.join(os.tmpdir(), "scim-connector-sigkill-"));
    await writeFile(path.join(dir, "mapping.yaml"), TEST_MAPPING);
    env = {
      DATABASE_URL: database.url,
      PLATFORM_URL: emulator.url,
      PLATFORM_SCIM_TOKEN: "dev-scim-token",
      PLATFORM_API_KEY: "dev-api-key",
      PLATFORM_REQUEST_ORIGIN: "x",
      PLATFORM_SCIM_DAILY_BUDGET: String(BUDGET),
      PLATFORM_TIMEOUT_MS: "2000",
      // Claims of a killed process come free when their lease ends (docs/mirror.md): short here so trials stay short.
      MIRROR_LEASE_MS: "5000",
      SCIM_TOKEN: IDP_TOKEN,
      ADMIN_TOKEN,
      MAPPING_FILE: path.join(dir, "mapping.yaml"),
      RECONCILE_WORKERS: "3",
      RECONCILE_POLL_MS: "100",
      QUARANTINE_COOLING_SECONDS: "1",
      // Twenty trials of leavers add up to a wave the mass-deprovision breaker would hold for an admin (tested elsewhere).
      DEPROVISION_BREAKER_MIN: "10000",
    };
    // Every platform call takes a while, so kills land with calls in flight.
    await addFault(emulator.url, { path: "/scim/v2/Users", delayMs: 200, status: null });
    await addFault(emulator.url, { path: "/email/status", delayMs: 120, status: null });
    connector = await spawnConnector(env);
    lastUrl = connector.url;
    idp = new ResilientIdp(() => lastUrl, IDP_TOKEN);
    etl = new EtlWriter(database.db, emails, 15);
    for (const g of GROUPS) model.groupIds.set(g, await idp.createGroup(g, []));
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const userName = `k-base${i}@example.com`;
      const id = await idp.createUser(userName);
      model.users.set(userName, { id, active: true, groups: new Set(["Marketing"]) });
      ids.push(id);
    }
    await idp.addMembers(model.groupIds.get("Marketing")!, ids);
    await etl.writeOnce(emails);
    await waitForQuiet(database.db, 120_000);
  }, 180_000);
  afterAll(async () => {
    await etl?.stop();
    await connector?.kill("SIGKILL");
    await emulator?.close();
    await database?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /**
   * One trial's IdP burst, paced over about 1.5 s so a kill can land while it pushes: four
   * joiners, then changes to six random users, in order; the model follows each answered request.
   * On a loaded machine the connector may not have the work the kill needs queued by then, so the
   * IdP goes on changing random users until `killed()` (at most 20 s), as an IdP's steady trickle.
   */
  async function burst(trial: number, killed: () => boolean): Promise<void> {
    const joiners: string[] = [];
    for (let k = 0; k < 4; k++) {
      const userName = `k${trial}-${k}@example.com`;
      const id = await idp.createUser(userName);
      model.users.set(userName, { id, active: true, groups: new Set() });
      joiners.push(userName);
      await delay(80);
    }
    await idp.addMembers(
      model.groupIds.get("Marketing")!,
      joiners.map((u) => model.users.get(u)!.id),
    );
    for (const u of joiners) model.users.get(u)!.groups.add("Marketing");
    const names = [...model.users.keys()];
    const started = Date.now();
    for (let k = 0; k < 6 || (!killed() && Date.now() - started < 20_000); k++) {
      await delay(80);
      const user = model.users.get(names[Math.floor(Math.random() * names.length)]!)!;
      const move = Math.floor(Math.random() * 4);
      if (move === 0) {
        await idp.setActive(user.id, !user.active);
        user.active = !user.active;
      } else {
        const group = GROUPS[move - 1]!;
        if (user.groups.has(group)) {
          await idp.removeMember(model.groupIds.get(group)!, user.id);
          user.groups.delete(group);
        } else {
          await idp.addMembers(model.groupIds.get(group)!, [user.id]);
          user.groups.add(group);
        }
      }
    }
  }

  /**
   * What the connector has left to do. `platformWork`: reconciles filed for a platform call that no
   * worker can have finished a moment later, because every such call takes 200 ms (the fault above):
   * waiting to be claimed, or claimed less than 100 ms ago. `mirrorSince`: mirror changes pending
   * that were last written at or before `since` (the ETL goes on writing through a kill).
   */
  const workLeft = async (since?: Date) =>
    (
      (await database.db.query(
        `SELECT (SELECT count(*) FROM reconcile_queue WHERE parked_at IS NULL)::int AS queued,
                (SELECT count(*) FROM reconcile_queue
                  WHERE parked_at IS NULL AND priority IS NOT NULL AND action = ANY($1)
                    AND (claimed_by IS NULL OR claimed_at > clock_timestamp() - interval '100 milliseconds'))::int AS "platformWork",
                (SELECT count(*) FROM mirror_sync.pending WHERE parked_at IS NULL)::int AS mirror,
                (SELECT count(*) FROM mirror_sync.pending WHERE parked_at IS NULL AND changed_at <= $2)::int AS "mirrorSince",
                clock_timestamp() AS at`,
        [["create", "resolve-create", "update", "deprovision"], since ?? null],
      )) as { queued: number; platformWork: number; mirror: number; mirrorSince: number; at: Date }[]
    )[0]!;

  /**
   * From a random moment in the burst on, polls until the IdP is pushing, reconciles that need the
   * platform are waiting or just started, and mirror changes are pending, and kills the connector
   * right there. Gives up (killing nothing) once the IdP has stopped pushing without that moment coming.
   */
  async function killMidWork(pushing: () => boolean): Promise<MidWork> {
    const started = Date.now();
    const notBefore = started + Math.floor(Math.random() * 800);
    for (;;) {
      const { queued, platformWork, mirror, at } = await workLeft();
      const idpPushing = pushing();
      if (!idpPushing)
        return {
          killed: false,
          killAtMs: Date.now() - started,
          idpPushing,
          queued,
          mirrorPending: mirror,
          queuedAfterKill: 0,
          mirrorAfterKill: 0,
        };
      if (Date.now() >= notBefore && platformWork > 0 && mirror > 0) {
        await connector!.kill("SIGKILL");
        // Nobody works the queue until the restart: what is left is what the kill interrupted or left
        // waiting; of the mirror's, only what was written before the poll that chose the moment.
        const after = await workLeft(at);
        return {
          killed: true,
          killAtMs: Date.now() - started,
          idpPushing,
          queued,
          mirrorPending: mirror,
          queuedAfterKill: after.queued,
          mirrorAfterKill: after.mirrorSince,
        };
      }
      await delay(10);
    }
  }

  for (let trial = 1; trial <= TRIALS; trial++) {
    it(`trial ${trial}: killed while the IdP pushes, reconciles are queued and mirror changes pending; after a restart the world is exact`, async () => {
      // A trial that failed before its restart must not fail the ones after it for want of a connector.
      if (connector?.child.exitCode !== null || connector.child.signalCode !== null) {
        connector = await spawnConnector(env);
        lastUrl = connector.url;
      }
      etl.start(60);
      let pushing = true;
      let killed = false;
      const pushed = burst(trial, () => killed).finally(() => (pushing = false));
      const kill = await killMidWork(() => pushing);
      killed = true;
      expect(kill, "the kill landed mid-work").toMatchObject({ killed: true, idpPushing: true });
      // The poll that chose the moment saw work by construction; what counts is what the kill left.
      expect(kill.queuedAfterKill, "reconciles left to the restarted connector").toBeGreaterThan(0);
      expect(kill.mirrorAfterKill, "mirror changes left to the restarted connector").toBeGreaterThan(0);
      connector = await spawnConnector(env);
      lastUrl = connector.url;
      await pushed;
      await etl.stop();
      const settled = Date.now();
      await waitForQuiet(database.db, 60_000).catch((error: Error) => {
        throw new Error(`${error.message}\nconnector output:\n${connector!.output().slice(-3_000)}`);
      });
      figures.push({ ...kill, settleMs: Date.now() - settled });
      expect(
        await worldProblems({ emulatorUrl: emulator.url, db: database.db, budget: BUDGET, expected: model.expected() }),
      ).toEqual([]);
    }, 90_000);
  }

  it("figures", async () => {
    const counts = await emulatorCounts(emulator.url);
    const found = await worldProblems({
      emulatorUrl: emulator.url,
      db: database.db,
      budget: BUDGET,
      expected: model.expected(),
    });
    console.info(
      `sigkill: ${figures.length} kills of ${TRIALS} trials; killed at ${figures.map((f) => f.killAtMs).join(", ")} ms into the trials, ` +
        `with reconciles queued ${figures.map((f) => f.queued).join(", ")} (left to the restart ${figures.map((f) => f.queuedAfterKill).join(", ")}) and mirror changes pending ${figures.map((f) => f.mirrorPending).join(", ")} (left to the restart ${figures.map((f) => f.mirrorAfterKill).join(", ")}); ` +
        `settle after restart max ${Math.max(...figures.map((f) => f.settleMs))} ms; ` +
        `IdP: ${idp.requests} requests, ${idp.resent} re-sent; ETL: ${etl.writes} row writes; ${model.users.size} users; ` +
        `platform: ${counts.requests["POST /scim/v2/Users"] ?? 0} POSTs, ${counts.requests["GET /scim/v2/Users"] ?? 0} lookups, ${counts.scimDaily.used} SCIM calls, ` +
        `${await ledgerDebits(database.db)} debits of ${BUDGET}; lost or wrong: ${found.length ? found.join("; ") : "nothing"}`,
    );
    expect(figures).toHaveLength(TRIALS);
    expect(found).toEqual([]);
  });
});
