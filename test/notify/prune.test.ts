import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fanOutNotifications, isIncidentOpen, pruneNotifications } from "../../src/db/notify/notificationRepository.js";
import { notify, resolve } from "../../src/notify/events.js";
import { approvalRequired, budgetExhausted } from "../../src/notify/reconcileEvents.js";
import { quarantineEnded, quarantineStarted } from "../../src/notify/platformEvents.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";

/** Old incidents that are over are removed; open ones that can recur, and anything still to send, stay. */
describe("notification retention", () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => t?.drop());

  it("removes resolved and day-keyed incidents past the retention, keeps open recurring ones and pending deliveries", async () => {
    const old = new Date("2026-01-05T10:00:00Z");
    const since = old;
    await t.db.transaction(async (tx) => {
      await notify(
        tx,
        quarantineStarted({ family: "scim", reason: "auth", detail: "x", since, resumeAt: since, lastStatus: 401 }),
      );
      await resolve(tx, quarantineEnded(old, { family: "scim", since }, "probe succeeded"));
    });
    await notify(t.db, budgetExhausted(old, { windowStart: old, used: 1, limit: 1, backlog: 1, resetsAt: old }));
    await notify(t.db, approvalRequired(old, { count: 3, kinds: ["deprovision"] }));
    await fanOutNotifications(t.db, [], old); // no channel: nothing pending
    // A recent day-keyed incident with a delivery still pending.
    const recent = new Date("2026-03-01T10:00:00Z");
    await notify(
      t.db,
      budgetExhausted(recent, { windowStart: recent, used: 1, limit: 1, backlog: 1, resetsAt: recent }),
    );
    await fanOutNotifications(t.db, ["webhook"], recent);

    expect(await pruneNotifications(t.db, new Date("2026-04-01T00:00:00Z"))).toBe(2); // the quarantine (resolved) and the January budget
    expect(await isIncidentOpen(t.db, "approvals")).toBe(true);
    const left: { key: string }[] = await t.db.query(`SELECT key FROM notification_incidents ORDER BY key`);
    expect(left.map((r) => r.key)).toEqual(["approvals", "budget:2026-03-01"]);
  });
});
