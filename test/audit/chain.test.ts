import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canonicalRow } from "../../src/db/auditChain.js";
import { CONNECTION_NAMES, openDatabase } from "../../src/db/dataSource.js";
import { deleteLogOlderThan, writeLogEntry } from "../../src/db/reconcile/logRepository.js";
import { emulatorState, idp, startStack, waitForQueueIdle, type Stack } from "../support/stack.js";
import { runCli } from "../support/cli.js";
import { independentChain } from "./independentChain.js";

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

  it("holds the hashes that code written apart from the product computes, JSON columns included", async () => {
    const [chain] = await stack.service.db.query<{ anchor_id: string; anchor_hash: string; head_hash: string }>(
      `SELECT anchor_id, anchor_hash, head_hash FROM audit_chains WHERE name = 'reconcile_log'`,
    );
    const rows = await stack.service.db.query<Record<string, unknown> & { chain_hash: string }>(
      `SELECT * FROM reconcile_log WHERE id > $1 ORDER BY id`,
      [chain!.anchor_id],
    );
    // The workload's entries carry nested JSON: a desired state in `after` with its grants.
    expect(rows.some((r) => r.after !== null && typeof r.after === "object")).toBe(true);
    const expected = independentChain(chain!.anchor_hash, rows);
    expect(rows.map((r) => r.chain_hash)).toEqual(expected);
    expect(chain!.head_hash).toBe(expected.at(-1));
  });

  it("names the entry whose JSON column `after` was changed inside, and verifies again once it is restored", async () => {
    const [target] = await stack.service.db.query<{ id: string; after: Record<string, unknown> }>(
      `SELECT id, after FROM reconcile_log WHERE after IS NOT NULL ORDER BY id LIMIT 1`,
    );
    await stack.service.db.query(
      `UPDATE reconcile_log SET after = jsonb_set(after, '{userName}', '"mallory@example.com"') WHERE id = $1`,
      [target!.id],
    );
    const tampered = await auditVerify();
    expect(tampered.code).toBe(1);
    expect(tampered.stderr).toContain(`entry ${target!.id} does not match its hash`);
    await stack.service.db.query(`UPDATE reconcile_log SET after = $2::jsonb WHERE id = $1`, [
      target!.id,
      JSON.stringify(target!.after),
    ]);
    expect((await auditVerify()).code).toBe(0);
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

  type ChainRow = { anchor_id: string; anchor_hash: string; head_id: string; head_hash: string };
  const chainRow = async () =>
    (
      await stack.service.db.query<ChainRow>(
        `SELECT anchor_id::text, anchor_hash, head_id::text, head_hash FROM audit_chains WHERE name = 'reconcile_log'`,
      )
    )[0]!;
  const setChainRow = (c: ChainRow) =>
    stack.service.db.query(
      `UPDATE audit_chains SET anchor_id = $1, anchor_hash = $2, head_id = $3, head_hash = $4 WHERE name = 'reconcile_log'`,
      [c.anchor_id, c.anchor_hash, c.head_id, c.head_hash],
    );

  it("moving the anchor to the head does not hide a changed entry: chained entries at or below the anchor fail (issue 34, finding 7)", async () => {
    const ids = await logIds();
    const target = ids[2]!;
    const [{ outcome }] = await stack.service.db.query<{ outcome: string }>(
      `SELECT outcome FROM reconcile_log WHERE id = $1`,
      [target],
    );
    const chain = await chainRow();
    await stack.service.db.query(`UPDATE reconcile_log SET outcome = 'failed' WHERE id = $1`, [target]);
    await setChainRow({ ...chain, anchor_id: chain.head_id, anchor_hash: chain.head_hash });
    try {
      const hidden = await auditVerify();
      expect(hidden.code).toBe(1);
      expect(hidden.stderr).toContain(
        `reconcile_log: NOT VERIFIED after 0 good entries: ${ids.length} chained entries lie at or below the anchor (entry ${chain.head_id}), the first entry ${ids[0]}`,
      );
    } finally {
      await stack.service.db.query(`UPDATE reconcile_log SET outcome = $2 WHERE id = $1`, [target, outcome]);
      await setChainRow(chain);
    }
    expect((await auditVerify()).code).toBe(0);
  });

  it("--head HASH: a chain rewritten from its anchor on verifies by itself, but no longer holds the head a pack signed", async () => {
    const ids = await logIds();
    const chain = await chainRow();
    const signedHead = chain.head_hash;
    const onChain = await runCli(stack, ["audit", "verify", "--head", signedHead]);
    expect(onChain.code).toBe(0);
    expect(onChain.stdout).toContain(`head ${signedHead}: on the chain, entry ${ids.at(-1)} of reconcile_log`);

    // The attacker changes an entry and re-hashes every entry after the anchor, and the head.
    const saved = await stack.service.db.query<{ id: string; chain_hash: string; outcome: string }>(
      `SELECT id::text, chain_hash, outcome FROM reconcile_log WHERE id > $1 ORDER BY id`,
      [chain.anchor_id],
    );
    await stack.service.db.query(`UPDATE reconcile_log SET outcome = 'failed' WHERE id = $1`, [ids[2]]);
    let previous = chain.anchor_hash;
    const rows = await stack.service.db.query<Record<string, unknown> & { id: string }>(
      `SELECT * FROM reconcile_log WHERE id > $1 ORDER BY id`,
      [chain.anchor_id],
    );
    for (const row of rows) {
      previous = createHash("sha256")
        .update(`${previous}\n${canonicalRow(row)}`, "utf8")
        .digest("hex");
      await stack.service.db.query(`UPDATE reconcile_log SET chain_hash = $2 WHERE id = $1`, [row.id, previous]);
    }
    await setChainRow({ ...chain, head_hash: previous });
    try {
      expect((await auditVerify()).code).toBe(0);
      const rewritten = await runCli(stack, ["audit", "verify", "--head", signedHead]);
      expect(rewritten.code).toBe(1);
      expect(rewritten.stderr).toContain(`head ${signedHead}: NOT on any verified chain`);
    } finally {
      for (const r of saved)
        await stack.service.db.query(`UPDATE reconcile_log SET chain_hash = $2, outcome = $3 WHERE id = $1`, [
          r.id,
          r.chain_hash,
          r.outcome,
        ]);
      await setChainRow(chain);
    }
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
    // Start again from an intact chain: the head back at the last entry the test above left (moving
    // the anchor past the entries instead would leave chained entries below it, which fails).
    await stack.service.db.query(
      `UPDATE audit_chains c SET head_id = e.id, head_hash = e.chain_hash
         FROM (SELECT id, chain_hash FROM reconcile_log ORDER BY id DESC LIMIT 1) e WHERE c.name = 'reconcile_log'`,
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
      expect(result.stdout).toContain(`reconcile_log: ${before + 200} entries verified`);
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
