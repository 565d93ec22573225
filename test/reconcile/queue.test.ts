import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  claimNext,
  dropIfUnchanged,
  listUnclassified,
  markUsersDirty,
  setPriority,
} from "../../src/db/reconcile/queueRepository.js";
import { WorkerLease } from "../../src/db/reconcile/workerLease.js";
import { PRIORITY } from "../../src/reconcile/planner.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";

/**
 * The queue's coalescing under concurrent classifiers. Regression: generations used to restart at
 * 1 when a dropped row was marked again, so a second loop holding a stale "nothing to do"
 * classification of the old row deleted the new mark, and the user was silently never reconciled.
 */
describe("reconcile queue generations", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => database?.drop());

  const mark = (userId: string) => database.db.transaction((tx) => markUsersDirty(tx, [userId], { kind: "idp" }));
  const rowsFor = async (userId: string) =>
    (await database.db.query(`SELECT generation FROM reconcile_queue WHERE user_id = $1`, [userId])) as unknown[];

  it("a stale drop never deletes a mark made after the row was dropped and re-created", async () => {
    const userId = randomUUID();
    await mark(userId);
    // Two classifier loops read the same unclassified row.
    const [seenByA] = (await listUnclassified(database.db, 100)).filter((r) => r.userId === userId);
    const [seenByB] = (await listUnclassified(database.db, 100)).filter((r) => r.userId === userId);
    await dropIfUnchanged(database.db, seenByA!); // loop A: not entitled yet, nothing to do
    expect(await rowsFor(userId)).toHaveLength(0);
    await mark(userId); // the IdP adds the user to a mapped group
    await dropIfUnchanged(database.db, seenByB!); // loop B acts on its stale reading
    expect(await rowsFor(userId)).toHaveLength(1);
  });

  it("a new mark on a row still queued bumps its generation, so a stale drop misses it", async () => {
    const userId = randomUUID();
    await mark(userId);
    const [seen] = (await listUnclassified(database.db, 100)).filter((r) => r.userId === userId);
    await mark(userId);
    await dropIfUnchanged(database.db, seen!);
    expect(await rowsFor(userId)).toHaveLength(1);
  });

  /**
   * Regression (the SIGKILL trials): a worker claimed a row and died mid-reconcile; the IdP marked
   * the user again meanwhile (its request re-sent), so the row was unclassified under a void claim.
   * The next classification found nothing to do, but the drop skipped every row with a claim, dead
   * or alive: the row stayed, was listed as unclassified on every pass, and the queue never drained.
   */
  it("a row re-marked under a dead worker's claim is dropped when it needs nothing", async () => {
    const userId = randomUUID();
    await mark(userId);
    const [unclassified] = (await listUnclassified(database.db, 100)).filter((r) => r.userId === userId);
    await setPriority(database.db, unclassified!, PRIORITY.update, "update");
    const dying = new WorkerLease(database.url, []);
    await dying.start();
    const claimed = await claimNext(database.db, dying.id, new Date(), PRIORITY.verify);
    expect(claimed?.userId).toBe(userId);
    await mark(userId); // the IdP re-sends the change while the reconcile is in flight
    await dying.stop(); // the worker dies before completing: its lease (and so its claim) is gone
    // The lock goes when the server has ended the lease's session, a moment after the client closed.
    const seen = await vi.waitFor(async () => {
      const [row] = (await listUnclassified(database.db, 100)).filter((r) => r.userId === userId);
      expect(row, "a void claim does not hide the row from classification").toBeDefined();
      return row!;
    });
    await dropIfUnchanged(database.db, seen); // the planner: already applied, nothing to do
    expect(await rowsFor(userId)).toHaveLength(0);
  });

  it("a row claimed by a live worker is never dropped by a classification that read it before the claim", async () => {
    const userId = randomUUID();
    await mark(userId);
    const [seenByA] = (await listUnclassified(database.db, 100)).filter((r) => r.userId === userId);
    const [seenByB] = (await listUnclassified(database.db, 100)).filter((r) => r.userId === userId);
    await setPriority(database.db, seenByA!, PRIORITY.update, "update");
    const live = new WorkerLease(database.url, []);
    await live.start();
    try {
      expect((await claimNext(database.db, live.id, new Date(), PRIORITY.verify))?.userId).toBe(userId);
      await dropIfUnchanged(database.db, seenByB!); // loop B's stale "nothing to do"
      expect(await rowsFor(userId)).toHaveLength(1);
    } finally {
      await live.stop();
    }
  });
});
