import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/clock.js";
import { listOutbox } from "../../src/db/notify/notificationRepository.js";
import { MirrorSyncWorker } from "../../src/mirror/worker.js";
import { HttpTransport } from "../../src/platform/transport.js";
import { PlatformRestClient } from "../../src/platform/rest.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";
import { API_KEY, makeWorker, startEmulator, upsertEmailStates } from "../support/mirror.js";

/** mirror.parked: queued in the transaction that parks the changes the platform refused; one per kind and day. */
describe("mirror.parked", () => {
  let t: TestDatabase;
  let emulator: Awaited<ReturnType<typeof startEmulator>>;
  beforeAll(async () => {
    t = await createTestDatabase();
    emulator = await startEmulator({ port: 0, apiKeys: { [API_KEY]: "*" } });
  });
  afterAll(async () => {
    await emulator?.close();
    await t?.drop();
  });

  it("rows parked by the platform in two cycles of one day give one mirror.parked", async () => {
    await t.db.query(
      `ALTER TABLE mirror.email_subscription_states DROP CONSTRAINT email_subscription_states_email_format`,
    );
    const rows: [string, string][] = Array.from({ length: 40 }, (_, i) => [`ok${i}@example.com`, "subscribed"]);
    rows.splice(7, 0, ["not-an-email", "subscribed"]);
    rows.push(["also@bad", "unsubscribed"]);
    await upsertEmailStates(t.db, rows);
    expect(await makeWorker(t.db, emulator).drain()).toMatchObject({ pushed: 40, parked: 2 });
    await upsertEmailStates(t.db, [["stillbad", "subscribed"]]); // parked later the same day: the same incident
    expect(await makeWorker(t.db, emulator).drain()).toMatchObject({ parked: 1 });

    const parked = (await listOutbox(t.db, 10)).filter((m) => m.event === "mirror.parked");
    expect(parked).toHaveLength(1);
    expect(parked[0]!.summary).toBe("1 email mirror change parked"); // until sent, the message shows the latest parking
  });
});

/**
 * A park that first met a row an ETL transaction held (its settlement deferred) and was applied by
 * the next cycle's retry: it must give mirror.parked like a park applied at once. The ETL's lock
 * is taken at the instant the push leaves, after the claim and before the settlement.
 */
describe("mirror.parked for a park settled on a retry", () => {
  let t: TestDatabase;
  let emulator: Awaited<ReturnType<typeof startEmulator>>;
  let etl: pg.Client;
  beforeAll(async () => {
    t = await createTestDatabase();
    emulator = await startEmulator({ port: 0, apiKeys: { [API_KEY]: "*" } });
    etl = new pg.Client({ connectionString: t.url });
    await etl.connect();
  });
  afterAll(async () => {
    await etl?.end();
    await emulator?.close();
    await t?.drop();
  });

  it("a refused change whose settlement waited for an ETL transaction is parked and reported", async () => {
    await t.db.query(
      `ALTER TABLE mirror.email_subscription_states DROP CONSTRAINT email_subscription_states_email_format`,
    );
    await upsertEmailStates(t.db, [["not-an-email", "subscribed"]]);
    // The ETL opens a transaction on the pending row as the push goes out, and holds it until told.
    let etlHolds = false;
    const clock = new ManualClock();
    const transport = new HttpTransport({
      baseUrl: emulator.url,
      clock,
      timeoutMs: 10_000,
      fetch: async (input, init) => {
        if (!etlHolds) {
          await etl.query("BEGIN");
          await etl.query(`SELECT 1 FROM mirror_sync.pending WHERE kind = 'email' FOR UPDATE`);
          etlHolds = true;
        }
        return fetch(input, init);
      },
    });
    const worker = new MirrorSyncWorker({
      db: t.db,
      rest: new PlatformRestClient(transport),
      apiKeys: { default: API_KEY },
      clock,
      lingerMs: 0,
    });
    const parkedRows = async () =>
      (await t.db.query(`SELECT count(*)::int AS n FROM mirror_sync.pending WHERE parked_at IS NOT NULL`))[0].n;

    await worker.runOnce();
    expect(etlHolds).toBe(true);
    expect(await parkedRows(), "the settlement waited for the ETL's transaction").toBe(0);
    await etl.query("ROLLBACK");
    await worker.runOnce();
    expect(await parkedRows(), "parked by the retried settlement").toBe(1);
    const parked = (await listOutbox(t.db, 10)).filter((m) => m.event === "mirror.parked");
    expect(parked.map((m) => m.summary)).toEqual(["1 email mirror change parked"]);
  });
});
