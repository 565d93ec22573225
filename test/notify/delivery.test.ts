import { createHmac } from "node:crypto";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import Transport from "winston-transport";
import { resetLogger, setLogLevel, setLogTransport } from "../../src/logging/logger.js";
import { claimDeliveries, fanOutNotifications } from "../../src/db/notify/notificationRepository.js";
import { notify } from "../../src/notify/events.js";
import { NotificationDeliverer } from "../../src/notify/deliverer.js";
import { addFault, clearFaults } from "../support/emulator.js";
import { ADMIN_TOKEN, emulatorState, idp, startStack, type Stack } from "../support/stack.js";
import { startHttpReceiver, type HttpReceiver } from "../support/receivers.js";

/**
 * Notifications end to end, in one process: the connector (emulator as the platform, workers
 * driven pass by pass) writes outbox rows with the state that causes them; the deliverer (driven
 * cycle by cycle here) sends them to a real HTTP receiver on loopback in the webhook, Slack and
 * Teams shapes.
 */

const SECRET = "notify-secret-0123456789abcdef";
const SLACK_TOKEN = "slackTOKENxyz0123456789";
const TEAMS_TOKEN = "teamsSIGxyz0123456789";

class CaptureTransport extends Transport {
  readonly lines: string[] = [];
  override log(info: Record<string | symbol, unknown>, callback: () => void): void {
    this.lines.push(String(info[Symbol.for("message")] ?? ""), JSON.stringify(info));
    callback();
  }
}

describe("notifications", () => {
  let stack: Stack;
  let receiver: HttpReceiver;
  const capture = new CaptureTransport();

  beforeAll(async () => {
    // Every log line of the file, at debug: the webhook URLs (tokens) and the secret must not appear.
    setLogTransport(capture);
    setLogLevel("debug");
    receiver = await startHttpReceiver();
    stack = await startStack({
      workers: false,
      env: {
        DEPROVISION_BREAKER_MIN: "3",
        QUARANTINE_AUTH_FAILURES: "3",
        QUARANTINE_COOLING_SECONDS: "3600",
        PUBLIC_URL: "https://scim.example.com",
        NOTIFY_WEBHOOK_URL: `${receiver.url}/webhook`,
        NOTIFY_WEBHOOK_SECRET: SECRET,
        NOTIFY_SLACK_WEBHOOK_URL: `${receiver.url}/slack/services/${SLACK_TOKEN}`,
        NOTIFY_TEAMS_WEBHOOK_URL: `${receiver.url}/teams/workflows/${TEAMS_TOKEN}`,
        NOTIFY_RETRY_BASE_MS: "20",
        NOTIFY_MAX_ATTEMPTS: "5",
      },
    });
  });
  afterAll(async () => {
    await stack?.close();
    await receiver?.close();
    resetLogger();
  });

  const deliverer = () => stack.service.notifications.deliverer;
  /** Cycles until a cycle claims nothing (deliveries due later are left for later). */
  const flush = async () => {
    while ((await deliverer().cycle()) > 0);
  };
  const drain = async () => {
    while (await stack.service.reconciliation!.worker.runOnce());
  };
  /** The receiver's check of docs/operations.md: `t=<unix seconds>,v1=<hex HMAC of "t.body">`. */
  const verify = (r: { raw: string; headers: Record<string, unknown> }) => {
    const { t, v1 } = Object.fromEntries(
      String(r.headers["x-signature"])
        .split(",")
        .map((p) => p.split("=")),
    );
    return v1 === createHmac("sha256", SECRET).update(`${t}.${r.raw}`).digest("hex");
  };

  it("a breaker trip gives exactly one approval.required per channel, signed; deciding gives approval.decided with the same id", async () => {
    const scim = idp(stack);
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push(await scim.createUser(`wave${i}@example.com`));
    const group = await scim.createGroup("Marketing", ids);
    await drain();
    expect((await emulatorState(stack)).dashboardUsers).toHaveLength(8);

    await scim.patch(
      `/Groups/${group}`,
      ids.slice(0, 6).map((id) => ({ op: "remove", path: `members[value eq "${id}"]` })),
    );
    await drain();
    await flush();
    await drain(); // held users reconciled again: still the same incident
    await flush();

    const [message, ...more] = receiver.ofEvent("approval.required");
    expect(more).toEqual([]);
    expect(verify(message!)).toBe(true);
    expect(JSON.parse(message!.raw)).toEqual({
      event: "approval.required",
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      occurredAt: expect.any(String),
      summary: "6 actions held for approval (deprovision)",
      details: { count: 6, kinds: ["deprovision"] },
      url: "https://scim.example.com/admin/approvals",
    });
    const slack = receiver.received.filter((r) => r.path.startsWith("/slack/"));
    expect(slack).toHaveLength(1);
    expect(slack[0]!.json.blocks.map((b: { type: string }) => b.type)).toEqual([
      "header",
      "section",
      "section",
      "actions",
      "context",
    ]);
    expect(slack[0]!.json.blocks[3].elements[0].url).toBe("https://scim.example.com/admin/approvals");
    const teams = receiver.received.filter((r) => r.path.startsWith("/teams/"));
    expect(teams).toHaveLength(1);
    expect(teams[0]!.json.type).toBe("message");
    expect(teams[0]!.json.attachments[0].contentType).toBe("application/vnd.microsoft.card.adaptive");
    expect(teams[0]!.json.attachments[0].content.type).toBe("AdaptiveCard");

    const approved = await request(stack.service.url)
      .post("/admin/api/approvals/all/approve")
      .set("Authorization", `Bearer ${ADMIN_TOKEN}`);
    expect(approved.body).toEqual({ decided: 6 });
    await flush();
    const [decided, ...moreDecided] = receiver.ofEvent("approval.decided");
    expect(moreDecided).toEqual([]);
    expect(decided!.json.id).toBe(message!.json.id);
    expect(verify(decided!)).toBe(true);
  });

  it("a quarantine gives quarantine.started, then quarantine.ended with the same id", async () => {
    await addFault(stack.emulator.url, { path: "/scim/v2", status: 401 });
    const scim = idp(stack);
    for (let i = 0; i < 4; i++) await scim.createUser(`q${i}@example.com`);
    await vi.waitFor(
      async () => {
        await drain();
        await stack.service.quarantine.settled();
        expect(await stack.service.quarantine.list()).toHaveLength(1);
      },
      { timeout: 20_000, interval: 100 },
    );
    await flush();
    const [started, ...more] = receiver.ofEvent("quarantine.started");
    expect(more).toEqual([]);
    expect(started!.json.details).toMatchObject({ family: "scim", reason: "auth" });
    expect(receiver.ofEvent("quarantine.ended")).toEqual([]);

    await clearFaults(stack.emulator.url);
    await stack.service.quarantine.resume("scim", "admin@example.com");
    await flush();
    const [ended, ...moreEnded] = receiver.ofEvent("quarantine.ended");
    expect(moreEnded).toEqual([]);
    expect(ended!.json.id).toBe(started!.json.id);
    expect(ended!.json.summary).toContain("resumed by admin@example.com");
  });

  it("a receiver answering 500 three times then 200 gets the message once; Retry-After is honoured", async () => {
    receiver.script(
      { status: 500 },
      { status: 500 },
      { status: 503, headers: { "retry-after": "1" } },
      { status: 200 },
    );
    const { incidentId } = await notify(stack.database.db, {
      key: "test:retry",
      event: "resync.failed",
      occurredAt: new Date(),
      summary: "retry me",
      details: {},
    });
    // Only the webhook channel gets this one: fan it out to one channel by cycling a one-channel deliverer.
    const webhookOnly = new NotificationDeliverer({
      db: stack.database.db,
      clock: { now: () => new Date() },
      channels: stack.service.notifications.channels.filter((c) => c.name === "webhook"),
      publicUrl: "",
      maxAttempts: 5,
      baseDelayMs: 20,
      leaseMs: 5_000,
    });
    await vi.waitFor(
      async () => {
        await webhookOnly.cycle();
        expect(receiver.ofEvent("resync.failed").filter((r) => r.json.id === incidentId)).toHaveLength(1);
      },
      { timeout: 15_000, interval: 20 },
    );
    // Timed by the receiver's own clock: the fourth attempt came at least Retry-After: 1 after the 503.
    const attempts = receiver.received.filter((r) => r.path === "/webhook" && r.json?.id === incidentId);
    expect(attempts.map((r) => r.status)).toEqual([500, 500, 503, 200]);
    expect(attempts[3]!.at - attempts[2]!.at).toBeGreaterThanOrEqual(900);
    const [row] = await stack.database.db.query(
      `SELECT d.state, d.attempts, d.last_error FROM notification_deliveries d JOIN notification_outbox o ON o.id = d.outbox_id WHERE o.incident_id = $1`,
      [incidentId],
    );
    expect(row).toMatchObject({ state: "sent", attempts: 4, last_error: "HTTP 503: receiver says no" });
  });

  it("a channel that keeps failing is parked after NOTIFY_MAX_ATTEMPTS with its last error", async () => {
    receiver.script(...Array.from({ length: 15 }, () => ({ status: 500 })));
    const { incidentId } = await notify(stack.database.db, {
      key: "test:park",
      event: "drift.found",
      occurredAt: new Date(),
      summary: "never",
      details: {},
    });
    await vi.waitFor(
      async () => {
        await deliverer().cycle();
        const rows: { state: string }[] = await stack.database.db.query(
          `SELECT d.state FROM notification_deliveries d JOIN notification_outbox o ON o.id = d.outbox_id WHERE o.incident_id = $1`,
          [incidentId],
        );
        expect(rows.map((r) => r.state)).toEqual(["parked", "parked", "parked"]);
      },
      { timeout: 20_000, interval: 20 },
    );
    const res = await request(stack.service.url)
      .get("/admin/api/notifications")
      .set("Authorization", `Bearer ${ADMIN_TOKEN}`);
    expect(res.status).toBe(200);
    const entry = res.body.outbox.find((o: { incidentId: string }) => o.incidentId === incidentId);
    expect(
      entry.deliveries.map((d: { state: string; attempts: number; lastError: string }) => [
        d.state,
        d.attempts,
        d.lastError,
      ]),
    ).toEqual([
      ["parked", 5, "HTTP 500: receiver says no"],
      ["parked", 5, "HTTP 500: receiver says no"],
      ["parked", 5, "HTTP 500: receiver says no"],
    ]);
    // Secrets: channels are shown by host only, never their URL's path or the signing secret.
    expect(res.body.channels.map((c: { name: string }) => c.name)).toEqual(["webhook", "slack", "teams"]);
    for (const secret of [SECRET, SLACK_TOKEN, TEAMS_TOKEN, "/webhook"]) expect(res.text).not.toContain(secret);
  });

  it("replicas send each message once", async () => {
    const db = stack.database.db;
    const channels = stack.service.notifications.channels.filter((c) => c.name === "webhook");
    const replica = (owner: string) =>
      new NotificationDeliverer({
        db,
        clock: { now: () => new Date() },
        channels,
        publicUrl: "",
        maxAttempts: 5,
        baseDelayMs: 20,
        leaseMs: 5_000,
        owner,
      });
    const replicas = ["a", "b", "c", "d"].map((name) => replica(`replica-${name}`));
    const ids: string[] = [];
    for (let i = 0; i < 80; i++)
      ids.push(
        (
          await notify(db, {
            key: `test:replicas:${i}`,
            event: "mirror.parked",
            occurredAt: new Date(),
            summary: `m${i}`,
            details: {},
          })
        ).incidentId,
      );
    // Every replica cycles at once, over and over, until all are sent.
    await vi.waitFor(
      async () => {
        await Promise.all(replicas.map((d) => d.cycle()));
        expect(receiver.ofEvent("mirror.parked").filter((r) => ids.includes(r.json.id))).toHaveLength(80);
      },
      { timeout: 20_000, interval: 1 },
    );
    await Promise.all(replicas.map((d) => d.cycle()));
    const got = receiver
      .ofEvent("mirror.parked")
      .map((r) => r.json.id as string)
      .filter((id) => ids.includes(id));
    expect(got.sort()).toEqual([...ids].sort());
    const once: { n: number }[] = await db.query(
      `SELECT count(*)::int AS n FROM notification_deliveries d JOIN notification_outbox o ON o.id = d.outbox_id WHERE o.summary LIKE 'm%' AND d.state = 'sent' AND d.attempts = 1`,
    );
    expect(once[0]!.n).toBe(80);
  });

  it("two replicas claiming at the same instant get disjoint deliveries (SKIP LOCKED), neither waits for the other", async () => {
    const db = stack.database.db;
    for (let i = 0; i < 10; i++)
      await notify(db, {
        key: `test:claim:${i}`,
        event: "mirror.parked",
        occurredAt: new Date(),
        summary: `c${i}`,
        details: {},
      });
    await fanOutNotifications(db, ["webhook"], new Date());
    const now = new Date();
    const lease = new Date(now.getTime() + 60_000);
    const [a, b] = await db.transaction(async (txA) => {
      const claimedByA = await claimDeliveries(txA, "replica-a", now, lease, 5); // A's claim not yet committed
      const claimedByB = await db.transaction(async (txB) => {
        await txB.query(`SET LOCAL lock_timeout = '2s'`); // a claim that waited for A's row locks fails here
        return claimDeliveries(txB, "replica-b", now, lease, 10);
      });
      return [claimedByA, claimedByB];
    });
    const key = (d: { outboxId: string; channel: string }) => `${d.outboxId}/${d.channel}`;
    expect(a).toHaveLength(5);
    expect(b.length).toBeGreaterThanOrEqual(5);
    expect(b.map(key).filter((k) => a.map(key).includes(k))).toEqual([]);
    // Hand them back so the other tests' deliverers are not kept waiting on a lease.
    await db.query(
      `UPDATE notification_deliveries SET lease_owner = NULL, lease_until = NULL, state = 'sent' WHERE lease_owner IN ('replica-a', 'replica-b')`,
    );
  });

  it("the Notifications page: an admin sees channels by host, the outbox with parked errors, and sends a test (CSRF required)", async () => {
    const agent = request.agent(stack.service.url);
    const login = await agent.get("/admin/login");
    await agent
      .post("/admin/login")
      .type("form")
      .send({ _csrf: /name="_csrf" value="([^"]+)"/.exec(login.text)![1], token: ADMIN_TOKEN });
    const page = await agent.get("/admin/notifications");
    expect(page.status).toBe(200);
    expect(page.text).toContain(`<code>${new URL(receiver.url).host}</code>`);
    expect(page.text).toContain("HTTP 500: receiver says no");
    expect(page.text).toContain("approval.required");
    for (const secret of [SECRET, SLACK_TOKEN, TEAMS_TOKEN]) expect(page.text).not.toContain(secret);
    expect(page.text).toContain('action="/admin/notifications/test/slack"');

    const forged = await agent.post("/admin/notifications/test/slack").type("form").send({ _csrf: "forged" });
    expect(forged.status).toBe(403);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.text)![1]!;
    const sent = await agent.post("/admin/notifications/test/slack").type("form").send({ _csrf: csrf });
    expect(sent.status).toBe(303);
    expect(sent.headers.location).toBe("/admin/notifications");
    await flush();
    const tests = receiver.received.filter(
      (r) => r.path.startsWith("/slack/") && r.json.text.includes("notification.test"),
    );
    expect(tests).toHaveLength(1);
    expect(tests[0]!.json.text).toContain("Test notification sent by");
  });

  it("a shutdown cuts a send short and leaves it pending, due at once, without using up the channel", async () => {
    const db = stack.database.db;
    receiver.script("hold");
    const running = new NotificationDeliverer({
      db,
      clock: { now: () => new Date() },
      channels: stack.service.notifications.channels.filter((c) => c.name === "webhook"),
      publicUrl: "",
      maxAttempts: 1,
      baseDelayMs: 20,
      leaseMs: 60_000,
      pollMs: 50,
    });
    const { incidentId } = await notify(db, {
      key: "test:shutdown",
      event: "resync.failed",
      occurredAt: new Date(),
      summary: "cut short",
      details: {},
    });
    running.start();
    await vi.waitFor(() => expect(receiver.held.some((h) => h.request.json?.id === incidentId)).toBe(true), {
      timeout: 10_000,
      interval: 20,
    });
    const stopping = Date.now();
    await running.stop();
    expect(Date.now() - stopping).toBeLessThan(5_000); // not the 30 s send timeout
    const [row] = await db.query(
      `SELECT d.state, d.attempts, d.last_error, d.lease_owner, d.next_attempt_at <= now() AS due FROM notification_deliveries d JOIN notification_outbox o ON o.id = d.outbox_id WHERE o.incident_id = $1`,
      [incidentId],
    );
    expect(row).toEqual({
      state: "pending",
      attempts: 1,
      last_error: "interrupted by a shutdown",
      lease_owner: null,
      due: true,
    }); // maxAttempts 1, yet not parked
  });

  it("no log line carries a channel's URL token or the signing secret", () => {
    const text = capture.lines.join("\n");
    expect(text).toContain("notification delivery parked"); // the failures were logged…
    for (const secret of [SECRET, SLACK_TOKEN, TEAMS_TOKEN]) expect(text).not.toContain(secret); // …without the secrets
  });
});
