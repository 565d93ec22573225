import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/clock.js";
import { listParkedChanges } from "../../src/db/mirror/statusRepository.js";
import { listOutbox } from "../../src/db/notify/notificationRepository.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";
import { eventually } from "../support/wait.js";
import {
  API_KEY,
  WireRecorder,
  control,
  makeWorker,
  pendingCount,
  requestCounts,
  startEmulator,
  upsertEmailStates,
} from "../support/mirror.js";

/** The mirror sync end to end: Postgres mirror tables → worker → the emulator over real HTTP. */

type Emulator = Awaited<ReturnType<typeof startEmulator>>;
type Dump = {
  emailStates: Record<string, string>;
  users: { email: string | null; subscription_groups: Record<string, string> }[];
  preferenceCenters: { preference_center_api_id: string; preference_center_title: string }[];
};

let t: TestDatabase;
let emulator: Emulator;
beforeAll(async () => {
  t = await createTestDatabase();
  emulator = await startEmulator({ port: 0, apiKeys: { [API_KEY]: "*", "eu-key": "*" } });
});
afterAll(async () => {
  await emulator?.close();
  await t?.drop();
});
beforeEach(async () => {
  await control(emulator, "POST", "/reset");
  await t.db.query(
    `TRUNCATE mirror.email_subscription_states, mirror.subscription_group_states, mirror.preference_centers, mirror_sync.pending, mirror_sync.pace_slots, mirror_sync.push_log`,
  );
});

const dump = () => control<Dump>(emulator, "GET", "/state");
const EMAIL_STATUS = "POST /email/status";

describe("email subscription states", () => {
  it("10,000 changes arrive in exactly ceil(n/50) requests per state", async () => {
    const counts = { subscribed: 6_010, unsubscribed: 2_990, opted_in: 1_000 };
    const rows: [string, string][] = [];
    let i = 0;
    for (const [state, n] of Object.entries(counts))
      for (let k = 0; k < n; k++) rows.push([`user${i++}@example.com`, state]);
    // Interleave states, as an ETL would write them.
    rows.sort((a, b) => (a[0].length % 3) - (b[0].length % 3) || a[0].localeCompare(b[0]));
    await upsertEmailStates(t.db, rows);

    const recorder = new WireRecorder();
    const report = await makeWorker(t.db, emulator, { recorder }).drain();

    expect(report.pushed).toBe(10_000);
    const perState: Record<string, number> = {};
    for (const b of recorder.bodies) {
      const state = (b.body as { subscription_state: string }).subscription_state;
      perState[state] = (perState[state] ?? 0) + 1;
    }
    expect(perState).toEqual({ subscribed: 121, unsubscribed: 60, opted_in: 20 });
    expect((await requestCounts(emulator))[EMAIL_STATUS]).toBe(201);
    const states = (await dump()).emailStates;
    expect(Object.keys(states)).toHaveLength(10_000);
    for (const [email, state] of rows) expect(states[email]).toBe(state);
    expect(await pendingCount(t.db)).toBe(0);
  });

  it("a row updated while its previous value is in flight ends with the latest value", async () => {
    await upsertEmailStates(t.db, [["late@example.com", "subscribed"]]);
    await control(emulator, "POST", "/faults", { method: "POST", path: "/email/status", delayMs: 600, count: 1 });
    const recorder = new WireRecorder();
    // No linger: the single change goes out in this very cycle.
    const worker = makeWorker(t.db, emulator, { recorder, lingerMs: 0 });
    const first = worker.runOnce();
    await eventually("one request recorded", async () => recorder.bodies.length === 1, { intervalMs: 10 });
    await upsertEmailStates(t.db, [["late@example.com", "unsubscribed"]]);
    await first;
    await worker.drain();
    expect((await dump()).emailStates["late@example.com"]).toBe("unsubscribed");
    expect(recorder.bodies.map((b) => (b.body as { subscription_state: string }).subscription_state)).toEqual([
      "subscribed",
      "unsubscribed",
    ]);
    expect(await pendingCount(t.db)).toBe(0);
  });

  it("a malformed row is parked with the platform's message and the rest of its batch lands", async () => {
    // Rows that predate a constraint (or an ETL that disabled it) reach the sync: the platform is the judge.
    await t.db.query(
      `ALTER TABLE mirror.email_subscription_states DROP CONSTRAINT email_subscription_states_email_format`,
    );
    try {
      const rows: [string, string][] = Array.from({ length: 120 }, (_, i) => [`ok${i}@example.com`, "subscribed"]);
      rows.splice(37, 0, ["not-an-email", "subscribed"]);
      rows.push(["also@bad", "unsubscribed"], ["fine@example.com", "unsubscribed"]);
      await upsertEmailStates(t.db, rows);
      const report = await makeWorker(t.db, emulator).drain();
      expect(report).toMatchObject({ pushed: 121, parked: 2 });
      const states = (await dump()).emailStates;
      expect(Object.keys(states).sort()).toEqual(
        rows
          .map((r) => r[0])
          .filter((e) => !["not-an-email", "also@bad"].includes(e))
          .sort(),
      );
      const parked = await listParkedChanges(t.db, { limit: 10 });
      expect(parked.map((p) => p.key).sort()).toEqual(["also@bad", "not-an-email"]);
      for (const p of parked) expect(p.reason).toMatch(/HTTP 400.*not an email address/);
      expect(await pendingCount(t.db)).toBe(2);
      // A fix by the ETL un-parks nothing else and the new value goes out.
      await upsertEmailStates(t.db, [["also@bad", "subscribed"]]);
      expect((await listParkedChanges(t.db, { limit: 10 })).map((p) => p.key)).toEqual(["not-an-email"]);
    } finally {
      await t.db.query(
        `DELETE FROM mirror.email_subscription_states WHERE NOT (email ~ '^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$')`,
      );
      await t.db.query(
        `ALTER TABLE mirror.email_subscription_states ADD CONSTRAINT email_subscription_states_email_format CHECK (email ~ '^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$' AND length(email) <= 255)`,
      );
    }
  });

  it("two sync workers at once push each change once", async () => {
    const rows: [string, string][] = Array.from({ length: 3_000 }, (_, i) => [
      `both${i}@example.com`,
      i % 3 === 0 ? "unsubscribed" : "subscribed",
    ]);
    await upsertEmailStates(t.db, rows);
    const recorder = new WireRecorder();
    const workers = [
      makeWorker(t.db, emulator, { recorder, emailRequestsPerClaim: 4 }),
      makeWorker(t.db, emulator, { recorder, emailRequestsPerClaim: 4 }),
    ];
    const reports = await Promise.all(workers.map((w) => w.drain()));
    expect(reports.every((r) => r.pushed > 0)).toBe(true);
    const sent = recorder.emailsSent();
    expect(sent).toHaveLength(3_000);
    expect(new Set(sent).size).toBe(3_000);
    expect(Object.keys((await dump()).emailStates)).toHaveLength(3_000);
    expect(await pendingCount(t.db)).toBe(0);
  });
});

describe("the running worker", () => {
  it("start() picks changes up as they commit, stop() ends the loop", async () => {
    const worker = makeWorker(t.db, emulator, { pollIntervalMs: 50, lingerMs: 100 });
    worker.start();
    try {
      await upsertEmailStates(
        t.db,
        Array.from({ length: 75 }, (_, i): [string, string] => [`loop${i}@example.com`, "subscribed"]),
      );
      await eventually("no pending changes", async () => (await pendingCount(t.db)) === 0, { intervalMs: 10 });
      await upsertEmailStates(t.db, [["loop0@example.com", "unsubscribed"]]);
      await eventually(
        "loop0 unsubscribed on the platform",
        async () => (await dump()).emailStates["loop0@example.com"] === "unsubscribed",
        { intervalMs: 10 },
      );
    } finally {
      await worker.stop();
    }
    expect(Object.keys((await dump()).emailStates)).toHaveLength(75);
    expect((await requestCounts(emulator))[EMAIL_STATUS]).toBe(3);
  });
});

describe("rate limits", () => {
  it("a 429 holds the family, releases the batch, and the changes land once the pause is over", async () => {
    await upsertEmailStates(
      t.db,
      Array.from({ length: 60 }, (_, i): [string, string] => [`slow${i}@example.com`, "opted_in"]),
    );
    await control(emulator, "POST", "/faults", { method: "POST", path: "/email/status", status: 429, count: 1 });
    const clock = new ManualClock();
    const worker = makeWorker(t.db, emulator, { lingerMs: 0, concurrency: 1, clock });
    const first = await worker.runOnce();
    expect(first.pushed).toBe(0);
    expect(first.released).toBe(60);
    const rows: { outcome: string }[] = await t.db.query(`SELECT outcome FROM mirror_sync.push_log ORDER BY id`);
    expect(rows.map((r) => r.outcome)).toEqual(["rate_limited"]);
    // Held: the next cycle sends nothing until the pause (1 s without Retry-After) has passed.
    expect((await worker.runOnce()).requests).toBe(0);
    clock.advance(1_100);
    await worker.drain();
    expect(Object.keys((await dump()).emailStates)).toHaveLength(60);
    expect((await requestCounts(emulator))[EMAIL_STATUS]).toBe(1 + 2);
  });
});

describe("platform outage", () => {
  it("5xx after retries releases the claim without sending the rest, backs off, and converges when the platform recovers", async () => {
    await upsertEmailStates(
      t.db,
      Array.from({ length: 500 }, (_, i): [string, string] => [`down${i}@example.com`, "unsubscribed"]),
    );
    await control(emulator, "POST", "/faults", { method: "POST", path: "/email/status", status: 503 });
    const clock = new ManualClock();
    const worker = makeWorker(t.db, emulator, { clock, lingerMs: 0, concurrency: 1 });
    const first = await worker.runOnce();
    expect(first).toMatchObject({ pushed: 0, released: 500 });
    // One request, tried three times by the transport; the other nine of the claim were never sent.
    expect((await requestCounts(emulator))[EMAIL_STATUS]).toBe(3);
    expect((await worker.runOnce()).requests).toBe(0); // held (backoff)
    await control(emulator, "DELETE", "/faults");
    clock.advance(2_000);
    await worker.drain();
    expect(Object.keys((await dump()).emailStates)).toHaveLength(500);
    expect((await requestCounts(emulator))[EMAIL_STATUS]).toBe(3 + 10);
    expect(await pendingCount(t.db)).toBe(0);
  });
});

describe("subscription groups", () => {
  it("sets each group's state by email, phone and external id, emails and phones in separate entries", async () => {
    const attributes = [
      { external_id: "u1", email: "u1@example.com", phone: "+14155550101" },
      { external_id: "u2", email: "u2@example.com", phone: "+14155550102" },
    ];
    const track = await fetch(`${emulator.url}/users/track`, {
      method: "POST",
      headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ attributes }),
    });
    expect(track.ok).toBe(true);
    await t.db.query(
      `INSERT INTO mirror.subscription_group_states (subscription_group_id, external_id, email, phone, subscription_state) VALUES
         ('news', NULL, 'u1@example.com', NULL, 'subscribed'),
         ('news', NULL, NULL, '+14155550102', 'subscribed'),
         ('sms', 'u1', NULL, NULL, 'unsubscribed'),
         ('sms', NULL, NULL, '+14155550102', 'subscribed')`,
    );
    const recorder = new WireRecorder();
    await makeWorker(t.db, emulator, { recorder }).drain();
    expect(recorder.bodies).toHaveLength(1);
    const entries = (recorder.bodies[0].body as { subscription_groups: Record<string, unknown>[] }).subscription_groups;
    expect(entries).toHaveLength(4);
    for (const e of entries) expect("emails" in e && "phones" in e).toBe(false);
    const users = Object.fromEntries((await dump()).users.map((u) => [u.email, u.subscription_groups]));
    expect(users["u1@example.com"]).toEqual({ news: "subscribed", sms: "unsubscribed" });
    expect(users["u2@example.com"]).toEqual({ news: "subscribed", sms: "subscribed" });
  });
});

describe("subscription groups: a bad identifier in a multi-entry request", () => {
  it("is parked by bisection; every other entry lands", async () => {
    await t.db.query(
      `ALTER TABLE mirror.subscription_group_states DROP CONSTRAINT subscription_group_states_phone_e164`,
    );
    try {
      await t.db.query(
        `INSERT INTO mirror.subscription_group_states (subscription_group_id, phone, subscription_state)
         SELECT 'g' || (i % 3), '+1415555' || lpad(i::text, 4, '0'), CASE WHEN i % 2 = 0 THEN 'subscribed' ELSE 'unsubscribed' END
           FROM generate_series(1, 300) i`,
      );
      await t.db.query(
        `INSERT INTO mirror.subscription_group_states (subscription_group_id, phone, subscription_state) VALUES ('g1', '555-0100', 'subscribed')`,
      );
      const recorder = new WireRecorder();
      const report = await makeWorker(t.db, emulator, { recorder }).drain();
      expect(report).toMatchObject({ pushed: 300, parked: 1 });
      const parked = await listParkedChanges(t.db, { limit: 10 });
      expect(parked).toEqual([
        expect.objectContaining({ kind: "subscription_group", reason: expect.stringMatching(/HTTP 400.*E\.164/) }),
      ]);
      // Every good phone reached the platform in a request it accepted.
      const rows: { outcome: string; changes: number }[] = await t.db.query(
        `SELECT outcome, changes FROM mirror_sync.push_log`,
      );
      expect(rows.filter((r) => r.outcome === "ok").reduce((n, r) => n + r.changes, 0)).toBe(300);
      const sentPhones = new Set(
        recorder.bodies.flatMap((b) =>
          (b.body as { subscription_groups: { phones?: string[] }[] }).subscription_groups.flatMap(
            (e) => e.phones ?? [],
          ),
        ),
      );
      expect(sentPhones.size).toBe(301);
    } finally {
      await t.db.query(`DELETE FROM mirror.subscription_group_states WHERE phone !~ '^\\+[1-9][0-9]{1,14}$'`);
      await t.db.query(
        `ALTER TABLE mirror.subscription_group_states ADD CONSTRAINT subscription_group_states_phone_e164 CHECK (phone ~ '^\\+[1-9][0-9]{1,14}$')`,
      );
    }
  });
});

describe("preference centers", () => {
  it("holds the pace of 10 per minute per workspace on the emulator's clock, and parks what cannot be sent", async () => {
    const clock = new ManualClock();
    const values = Array.from(
      { length: 25 },
      (_, i) => `('pc${i}', 'default', 'Page ${i}', '<p>${i}</p>', '<p>thanks</p>')`,
    );
    values.push(...[0, 1, 2].map((i) => `('eu${i}', 'eu', 'EU ${i}', '<p>eu</p>', '<p>thanks</p>')`));
    values.push(`('lost', 'apac', 'Nowhere', '<p>x</p>', '<p>x</p>')`);
    await t.db.query(
      `INSERT INTO mirror.preference_centers (preference_center_external_id, workspace, title, page_html, confirmation_html) VALUES ${values.join(", ")}`,
    );
    await t.db.query(
      `INSERT INTO mirror.preference_centers (preference_center_external_id, page_html, confirmation_html, options) VALUES ('odd', '<p>', '<p>', '{"colour": "red"}')`,
    );
    const worker = makeWorker(t.db, emulator, { clock, apiKeys: { default: API_KEY, eu: "eu-key" } });
    const puts = async () =>
      (await requestCounts(emulator))["PUT /preference_center/v1/{preferenceCenterExternalID}"] ?? 0;

    await worker.runOnce();
    expect(await puts()).toBe(10 + 3);
    await worker.runOnce();
    expect(await puts()).toBe(13);
    for (const expected of [23, 29]) {
      clock.advance(61_000);
      await control(emulator, "POST", "/clock", { advanceMs: 61_000 });
      await worker.runOnce();
      expect(await puts()).toBe(expected);
    }
    // 25 + 1 refused (odd) in default, 3 in eu: 29 PUTs, each page once, so no 429 along the way.
    clock.advance(61_000);
    await control(emulator, "POST", "/clock", { advanceMs: 61_000 });
    await worker.drain();
    const centers = (await dump()).preferenceCenters;
    expect(centers).toHaveLength(28);
    expect(await puts()).toBe(29);
    const parked = Object.fromEntries((await listParkedChanges(t.db, { limit: 10 })).map((p) => [p.key, p.reason]));
    expect(Object.keys(parked).sort()).toEqual(["lost", "odd"]);
    expect(parked.lost).toMatch(/no API key for workspace "apac"/);
    expect(parked.odd).toMatch(/HTTP 400.*unknown option/);
    // Each park is reported as it settles (src/mirror/settle.ts), preference centers like the batches.
    const notices = (await listOutbox(t.db, 50)).filter((m) => m.event === "mirror.parked");
    expect(notices.map((m) => m.summary).filter((s) => s.includes("preference_center"))).toEqual([
      "1 preference_center mirror change parked",
    ]);
  });

  it("two replicas share one workspace's pace", async () => {
    const values = Array.from({ length: 15 }, (_, i) => `('shared${i}', '<p>${i}</p>', '<p>thanks</p>')`);
    await t.db.query(
      `INSERT INTO mirror.preference_centers (preference_center_external_id, page_html, confirmation_html) VALUES ${values.join(", ")}`,
    );
    const clock = new ManualClock();
    const workers = [makeWorker(t.db, emulator, { clock }), makeWorker(t.db, emulator, { clock })];
    await Promise.all(workers.map((w) => w.runOnce()));
    await Promise.all(workers.map((w) => w.runOnce()));
    const stats = await requestCounts(emulator);
    expect(stats["PUT /preference_center/v1/{preferenceCenterExternalID}"]).toBe(10);
    expect((await dump()).preferenceCenters).toHaveLength(10);
  });
});
