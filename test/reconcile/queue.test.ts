import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dropIfUnchanged, listUnclassified, markUsersDirty } from "../../src/db/reconcileQueueRepository.js";
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
  const rowsFor = async (userId: string) => (await database.db.query(`SELECT generation FROM reconcile_queue WHERE user_id = $1`, [userId])) as unknown[];

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
});
