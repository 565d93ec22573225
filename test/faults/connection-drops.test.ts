import { setTimeout as delay } from "node:timers/promises";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONNECTION_NAMES } from "../../src/db/dataSource.js";
import { WORKER_LOCK_CLASS } from "../../src/db/reconcile/queueRepository.js";
import { startStack, IDP_TOKEN, type Stack } from "../support/stack.js";
import { EtlWriter, IdpModel, ResilientIdp, waitForQuiet, worldProblems } from "../support/faultWorld.js";
import { addFault, clearFaults } from "../support/emulator.js";

/**
 * Single database connections dropped under a running connector (a proxy or an idle timeout
 * cutting them, `pg_terminate_backend`), while the workers' lease connections survive: every
 * reconcile and push that lost its connection mid-way must be picked up again, without a restart.
 */

const BUDGET = 500;

describe("pooled database connections terminated mid-work", () => {
  let stack: Stack;
  let killer: pg.Client;
  const model = new IdpModel();

  beforeAll(async () => {
    stack = await startStack({
      env: { PLATFORM_SCIM_DAILY_BUDGET: String(BUDGET), RECONCILE_WORKERS: "3", QUARANTINE_COOLING_SECONDS: "1" },
    });
    killer = new pg.Client({ connectionString: stack.database.url, application_name: "scim-connector-test-killer" });
    await killer.connect();
  });
  afterAll(async () => {
    await killer?.end();
    await stack?.close();
  });

  /** The backend of the reconcile worker's lease (its advisory lock), as PostgreSQL sees it. */
  async function leasePid(): Promise<number> {
    const { rows } = await killer.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1`,
      [CONNECTION_NAMES.reconcileLease],
    );
    expect(rows, "one reconcile lease connection").toHaveLength(1);
    return rows[0]!.pid;
  }

  it("every reconcile and mirror change whose connection was cut is done afterwards, by the same process", async () => {
    const idp = new ResilientIdp(() => stack.service.url, IDP_TOKEN);
    const etl = new EtlWriter(
      stack.database.db,
      Array.from({ length: 200 }, (_, i) => `drop${i}@example.com`),
    );
    await addFault(stack.emulator.url, { path: "/scim/v2/Users", delayMs: 30, status: null });
    model.groupIds.set("Marketing", await idp.createGroup("Marketing", []));
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) {
      const userName = `drop${String(i).padStart(2, "0")}@example.com`;
      const id = await idp.createUser(userName);
      model.users.set(userName, { id, active: true, groups: new Set(["Marketing"]) });
      ids.push(id);
    }
    await idp.addMembers(model.groupIds.get("Marketing")!, ids);
    etl.start(50);
    // For at least 3 s, and until both workers have lost a connection while holding work, cut every
    // connection of the connector's pools that is running a statement: not the reconcile lease
    // (it holds the claims' advisory lock) and not the test's own (only the roles named are cut).
    // What each cut connection held is read in the same statement, tied to that connection:
    // - reconciles: rows claimed under a live worker lease (its advisory lock granted in pg_locks),
    //   not stale claims of a lease that is gone;
    // - mirror changes: rows under a live claim that the cut connection's own transaction has
    //   locked or written (their xmax is its backend_xid: the settling transaction). The mirror
    //   worker's connections are cut only then: cutting its claims before it held any only sent
    //   it into its growing backoff, and a run could end without it ever holding work when cut.
    const leaseBefore = await leasePid();
    const terminated = new Map<string, number>();
    const cutHoldingWork = { reconciler: 0, mirror: 0 };
    const started = Date.now();
    while (
      Date.now() - started < 3_000 ||
      ((cutHoldingWork.reconciler === 0 || cutHoldingWork.mirror === 0) && Date.now() - started < 30_000)
    ) {
      const { rows } = await killer.query<{
        role: string;
        ok: boolean;
        claimed_reconciles: number;
        claimed_mirror: number;
      }>(
        `WITH leases AS (
           SELECT objid::int AS id FROM pg_locks
            WHERE locktype = 'advisory' AND classid = $3 AND objsubid = 2 AND granted
              AND database = (SELECT oid FROM pg_database WHERE datname = current_database())),
         victims AS (
           SELECT a.pid, a.application_name AS role,
                  CASE WHEN a.application_name = $2 THEN 0 ELSE
                    (SELECT count(*)::int FROM reconcile_queue WHERE claimed_by IN (SELECT id FROM leases)) END AS claimed_reconciles,
                  CASE WHEN a.application_name <> $2 OR a.backend_xid IS NULL THEN 0 ELSE
                    (SELECT count(*)::int FROM mirror_sync.pending p
                      WHERE p.claim_id IS NOT NULL AND p.claimed_until > clock_timestamp()
                        AND p.xmax::text = a.backend_xid::text) END AS claimed_mirror
             FROM pg_stat_activity a
            WHERE a.datname = current_database() AND a.pid <> pg_backend_pid()
              AND ((a.state = 'active' AND a.application_name = ANY($1))
                OR (a.state IN ('active', 'idle in transaction') AND a.application_name = $2)))
         SELECT role, claimed_reconciles, claimed_mirror, pg_terminate_backend(pid) AS ok
           FROM victims WHERE role <> $2 OR claimed_mirror > 0`,
        [
          [CONNECTION_NAMES.http, CONNECTION_NAMES.reconcileWorker, CONNECTION_NAMES.scheduler],
          CONNECTION_NAMES.mirrorWorker,
          WORKER_LOCK_CLASS,
        ],
      );
      for (const row of rows.filter((r) => r.ok)) {
        terminated.set(row.role, (terminated.get(row.role) ?? 0) + 1);
        if (row.role === CONNECTION_NAMES.reconcileWorker && row.claimed_reconciles > 0) cutHoldingWork.reconciler++;
        if (row.role === CONNECTION_NAMES.mirrorWorker) cutHoldingWork.mirror++;
      }
      await delay(5);
    }
    await etl.stop().catch(() => undefined);
    await clearFaults(stack.emulator.url);
    await etl.writeOnce(["drop0@example.com"]).catch(() => etl.writeOnce(["drop0@example.com"]));
    await waitForQuiet(stack.database.db, 45_000);
    const found = await worldProblems({
      emulatorUrl: stack.emulator.url,
      db: stack.database.db,
      budget: BUDGET,
      expected: model.expected(),
    });
    const cut = [...terminated].map(([role, count]) => `${role} ${count}`).join(", ");
    console.info(
      `connection drops: terminated mid-statement ${cut}; while holding work: reconciler ${cutHoldingWork.reconciler}, mirror ${cutHoldingWork.mirror}; lost or wrong: ${found.length ? found.join("; ") : "nothing"}`,
    );
    // The premise: the worker's lease lived through it all, so its claims stayed live and only a
    // release by the same process could free them.
    expect(await leasePid(), "the reconcile lease's connection").toBe(leaseBefore);
    expect(cutHoldingWork.reconciler, "reconcile worker connections cut while reconciles were claimed").toBeGreaterThan(
      0,
    );
    expect(cutHoldingWork.mirror, "mirror worker connections cut while mirror changes were claimed").toBeGreaterThan(0);
    expect(found).toEqual([]);
  }, 120_000);
});
