import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listOutbox } from "../../src/db/notificationRepository.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";
import { API_KEY, makeWorker, startEmulator, upsertEmailStates } from "../mirror/support.js";

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
