import { setTimeout as delay } from "node:timers/promises";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, IDP_TOKEN, type Stack } from "../support/stack.js";
import { addFault, clearFaults, EtlWriter, IdpModel, ResilientIdp, waitForQuiet, worldProblems } from "../support/faultWorld.js";

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
    stack = await startStack({ env: { PLATFORM_SCIM_DAILY_BUDGET: String(BUDGET), RECONCILE_WORKERS: "3", QUARANTINE_COOLING_SECONDS: "1" } });
    killer = new pg.Client({ connectionString: stack.database.url });
    await killer.connect();
  });
  afterAll(async () => {
    await killer?.end();
    await stack?.close();
  });

  it("every reconcile and mirror change whose connection was cut is done afterwards, by the same process", async () => {
    const idp = new ResilientIdp(() => stack.service.url, IDP_TOKEN);
    const etl = new EtlWriter(stack.database.db, Array.from({ length: 200 }, (_, i) => `drop${i}@example.com`));
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
    // For 3 s, cut every pooled connection of the database that is running a statement (not the
    // workers' lease connections, which hold their advisory locks, and not this one).
    let terminated = 0;
    const until = Date.now() + 3_000;
    while (Date.now() < until) {
      const { rows } = await killer.query(
        `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active'
            AND application_name = 'scim-connector'`,
      );
      terminated += rows.filter((r) => r.ok).length;
      await delay(5);
    }
    await etl.stop().catch(() => undefined);
    await clearFaults(stack.emulator.url);
    await etl.writeOnce(["drop0@example.com"]).catch(() => etl.writeOnce(["drop0@example.com"]));
    await waitForQuiet(stack.database.db, 45_000);
    const found = await worldProblems({ emulatorUrl: stack.emulator.url, db: stack.database.db, budget: BUDGET, expected: model.expected() });
    console.info(`connection drops: ${terminated} connections terminated mid-statement in 3 s; lost or wrong: ${found.length ? found.join("; ") : "nothing"}`);
    expect(terminated).toBeGreaterThan(0);
    expect(found).toEqual([]);
  }, 120_000);
});
