import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONNECTION_NAMES, openDatabase } from "../../src/db/dataSource.js";
import { deleteLogOlderThan, writeLogEntry } from "../../src/db/reconcileLogRepository.js";
import { emulatorState, idp, startStack, waitForQueueIdle, type Stack } from "../support/stack.js";
import { runCli } from "../support/cli.js";

/**
 * The tamper-evident log (docs/access-review.md): after a real reconcile workload over HTTP with the
 * emulator, `scim-connector audit verify` accepts the chain; an UPDATE of one column of one entry is
 * named by its id, a deleted entry is found, and two replicas appending at once leave one valid chain.
 */

describe("the reconciliation log's hash chain", () => {
  let stack: Stack;

  /** `scim-connector audit verify` as an operator runs it, on this stack's database. */
  const auditVerify = () => runCli(stack, ["audit", "verify"]);

  const logIds = async () =>
    (await stack.service.db.query<{ id: string }>(`SELECT id FROM reconcile_log ORDER BY id`)).map((r) => r.id);

  beforeAll(async () => {
    stack = await startStack();
    const api = idp(stack);
    const users = [];
    for (const name of ["ann", "bob", "cid", "dee", "eve"]) users.push(await api.createUser(`${name}@example.com`));
    const group = await api.createGroup("Platform Admins", users);
    await waitForQueueIdle(stack, { deferred: "wait" });
    await api.patch(`/Groups/${group}`, [{ op: "remove", path: `members[value eq "${users[0]}"]` }]);
    await api.patch(`/Users/${users[1]}`, [{ op: "replace", path: "active", value: false }]);
    await waitForQueueIdle(stack, { deferred: "wait" });
  }, 90_000);
  afterAll(async () => stack?.close());

  it("verifies after a reconcile workload against the emulator", async () => {
    const state = await emulatorState(stack);
    // ann lost her only mapped group and bob was deactivated: both deprovisioned.
    expect(state.dashboardUsers.map((u) => u.userName).sort()).toEqual([
      "cid@example.com",
      "dee@example.com",
      "eve@example.com",
    ]);
    const ids = await logIds();
    expect(ids.length).toBeGreaterThanOrEqual(6);
    const result = await auditVerify();
    expect(result).toMatchObject({ code: 0 });
    expect(result.stdout).toContain(`reconcile_log: ${ids.length} entries verified; head entry ${ids.at(-1)}`);
  });

  it("names the entry whose one column was changed in the database, and verifies again once it is restored", async () => {
    const ids = await logIds();
    const target = ids[2]!;
    const [{ outcome }] = await stack.service.db.query<{ outcome: string }>(
      `SELECT outcome FROM reconcile_log WHERE id = $1`,
      [target],
    );
    await stack.service.db.query(`UPDATE reconcile_log SET outcome = 'failed' WHERE id = $1`, [target]);
    const tampered = await auditVerify();
    expect(tampered.code).toBe(1);
    expect(tampered.stderr).toContain(`entry ${target} does not match its hash`);
    await stack.service.db.query(`UPDATE reconcile_log SET outcome = $2 WHERE id = $1`, [target, outcome]);
    expect((await auditVerify()).code).toBe(0);
  });

  it("finds a deleted entry, in the middle or at the end", async () => {
    const ids = await logIds();
    await stack.service.db.query(`DELETE FROM reconcile_log WHERE id = $1`, [ids[3]]);
    const middle = await auditVerify();
    expect(middle.code).toBe(1);
    expect(middle.stderr).toContain(`entry ${ids[4]} does not match its hash`);
    expect(middle.stderr).toContain(`(after ${ids[2]}) was removed or changed`);

    await stack.service.db.query(`DELETE FROM reconcile_log WHERE id >= $1`, [ids[3]]);
    const tail = await auditVerify();
    expect(tail.code).toBe(1);
    expect(tail.stderr).toContain(`the chain ends at entry ${ids[2]} but its head is entry ${ids.at(-1)}`);
  });

  it("two replicas appending at once leave one valid chain", async () => {
    // Start again from an intact chain: the anchor after the tampered entries, as retention leaves it.
    await stack.service.db.query(
      `UPDATE audit_chains SET anchor_id = head_id, anchor_hash = head_hash WHERE name = 'reconcile_log'`,
    );
    const replicas = await Promise.all(
      ["a", "b"].map(() =>
        openDatabase({ url: stack.database.url, poolSize: 4, applicationName: CONNECTION_NAMES.cli }),
      ),
    );
    try {
      const before = (await logIds()).length;
      await Promise.all(
        replicas.flatMap((db, r) =>
          Array.from({ length: 100 }, (_, i) =>
            writeLogEntry(db, {
              at: new Date(),
              userName: `replica-${r}-${i}@example.com`,
              action: "verify",
              outcome: "succeeded",
              trigger: { kind: "resync", runId: `run-${r}` },
            }),
          ),
        ),
      );
      expect((await logIds()).length).toBe(before + 200);
      const result = await auditVerify();
      expect(result).toMatchObject({ code: 0 });
      expect(result.stdout).toContain("reconcile_log: 200 entries verified");
    } finally {
      await Promise.all(replicas.map((db) => db.close()));
    }
  });

  it("retention deletes the log's oldest entries and the rest still verifies", async () => {
    const ids = await logIds();
    const [{ at }] = await stack.service.db.query<{ at: Date }>(`SELECT at FROM reconcile_log WHERE id = $1`, [
      ids[Math.floor(ids.length / 2)],
    ]);
    const removed = await deleteLogOlderThan(stack.service.db, at);
    expect(removed).toBeGreaterThan(0);
    const kept = await logIds();
    expect(kept.length).toBe(ids.length - removed);
    const result = await auditVerify();
    expect(result).toMatchObject({ code: 0 });
    expect(result.stdout).toContain(`reconcile_log: ${kept.length} entries verified`);
  });
});
