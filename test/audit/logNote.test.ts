import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LogNote1763700002000 } from "../../migrations/1763700002000-log-note.js";
import { appendToChain, canonicalRow, RECONCILE_LOG_CHAIN, verifyChain } from "../../src/db/auditChain.js";
import type { Queryable } from "../../src/db/database.js";
import { logWindow } from "../../src/db/review/evidenceRepository.js";
import { listLog, writeLogEntry } from "../../src/db/reconcile/logRepository.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";
import { independentChain } from "./independentChain.js";

/**
 * The log's words in two fields (issue 39): an entry that failed says why in `error`; any other
 * entry's words are its `note`. Entries written before the note (commit 509cb8a; the chain came
 * with fcae8f0, after 0.2.0) kept every entry's words in `error` and were hashed into the chain so: the migration adds `note` without touching them, the
 * chain still verifies (by the product and by code written apart from it), and they are read back
 * with a success's words as its note.
 */

describe("the log's note: success words apart from errors, older entries' hashes kept", () => {
  let database: TestDatabase;
  const migration = new LogNote1763700002000();
  type Runner = Parameters<LogNote1763700002000["up"]>[0];
  const runner = (q: Queryable) => ({ query: (sql: string) => q.query(sql) }) as unknown as Runner;
  const at = new Date("2026-11-20T10:00:00Z");

  /** An entry as the code before 509cb8a wrote it: its words in `error` whatever the outcome, chained with the columns it had. */
  const writeAsBefore = (outcome: string, error: string) =>
    database.db.transaction((tx) =>
      appendToChain(tx, RECONCILE_LOG_CHAIN, async () => {
        const [row] = await tx.query<Record<string, unknown> & { id: string }>(
          `INSERT INTO reconcile_log (at, user_name, action, outcome, trigger, changes, calls_spent, error)
           VALUES ($1, 'ann@example.com', 'update', $2, '{"kind":"idp"}', '[]', 1, $3) RETURNING *`,
          [at, outcome, error],
        );
        return { id: row!.id, canonical: canonicalRow(row!) };
      }),
    );

  beforeAll(async () => {
    database = await createTestDatabase();
    await migration.down(runner(database.db)); // the table before migration 2000
    await writeAsBefore("succeeded", "access removed: deactivated in the IdP; account kept until 2026-11-21");
    await writeAsBefore("failed", "platform answered 400: invalid email");
    await database.db.transaction((tx) => migration.up(runner(tx)));
    await writeLogEntry(database.db, {
      at,
      userName: "bob@example.com",
      action: "revoke",
      outcome: "succeeded",
      note: 'basic_access revoked in campaign "Q4" by kate: left',
    });
    await writeLogEntry(database.db, {
      at,
      userName: "bob@example.com",
      action: "update",
      outcome: "retrying",
      error: "platform answered 503",
    });
  }, 60_000);
  afterAll(async () => database?.drop());

  it("writes a success's words to note and a failure's to error", async () => {
    const rows = await database.db.query<{ outcome: string; error: string | null; note: string | null }>(
      `SELECT outcome, error, note FROM reconcile_log WHERE user_name = 'bob@example.com' ORDER BY id`,
    );
    expect(rows).toEqual([
      { outcome: "succeeded", error: null, note: 'basic_access revoked in campaign "Q4" by kate: left' },
      { outcome: "retrying", error: "platform answered 503", note: null },
    ]);
  });

  it("keeps the chain of entries written before the note column: verified by the product and apart from it", async () => {
    expect(await verifyChain(database.db, RECONCILE_LOG_CHAIN)).toMatchObject({ ok: true, entries: 4 });
    const [chain] = await database.db.query<{ anchor_hash: string; anchor_id: string }>(
      `SELECT anchor_hash, anchor_id FROM audit_chains WHERE name = 'reconcile_log'`,
    );
    const rows = await database.db.query<Record<string, unknown> & { chain_hash: string }>(
      `SELECT * FROM reconcile_log WHERE id > $1 ORDER BY id`,
      [chain!.anchor_id],
    );
    expect(rows.map((r) => r.chain_hash)).toEqual(independentChain(chain!.anchor_hash, rows));
  });

  it("reads an older success's words as its note, in the API's entries and the evidence pack", async () => {
    const { entries } = await listLog(database.db, {});
    const words = entries.reverse().map((e) => ({ outcome: e.outcome, error: e.error, note: e.note }));
    const expected = [
      {
        outcome: "succeeded",
        error: null,
        note: "access removed: deactivated in the IdP; account kept until 2026-11-21",
      },
      { outcome: "failed", error: "platform answered 400: invalid email", note: null },
      { outcome: "succeeded", error: null, note: 'basic_access revoked in campaign "Q4" by kate: left' },
      { outcome: "retrying", error: "platform answered 503", note: null },
    ];
    expect(words).toEqual(expected);
    const pack = [];
    for await (const batch of logWindow(database.db, new Date(0), new Date(at.getTime() + 1)))
      pack.push(...batch.map((e) => ({ outcome: e.outcome, error: e.error, note: e.note })));
    expect(pack).toEqual(expected);
  });
});
