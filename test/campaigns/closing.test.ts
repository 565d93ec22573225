import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { campaignPass } from "../../src/review/campaigns/index.js";
import { ManualClock } from "../../src/clock.js";
import {
  ADMIN_TOKEN,
  adminApi,
  emulatorState,
  idp,
  startStack,
  waitForQueueIdle,
  type Stack,
} from "../support/stack.js";
import { eventually } from "../support/wait.js";

/**
 * The scheduler's campaign pass on a ManualClock: one reminder before the due date while items are
 * open, then the close at the due date, undecided items reported (and kept, by default).
 */
describe("campaign reminders and closing", () => {
  let stack: Stack;
  const clock = new ManualClock();
  const HOUR = 3_600_000;

  beforeAll(async () => {
    stack = await startStack({ clock, workers: false });
    const group = await idp(stack).createGroup("Marketing");
    for (const name of ["r1@example.com", "r2@example.com"]) {
      const id = await idp(stack).createUser(name);
      await idp(stack).patch(`/Groups/${group}`, [{ op: "add", path: "members", value: [{ value: id }] }]);
    }
    const worker = stack.service.reconciliation!.worker;
    while (await worker.runOnce());
  });
  afterAll(async () => stack?.close());

  it("reminds once within CAMPAIGN_REMIND_HOURS of the due date, then closes at it, reporting the undecided", async () => {
    const started = await request(stack.service.url)
      .post("/admin/api/campaigns")
      .set("Authorization", `Bearer ${ADMIN_TOKEN}`)
      .send({
        name: "Monthly",
        scope: { kind: "workspace", workspace: "EU Production" },
        dueAt: new Date(clock.now().getTime() + 72 * HOUR).toISOString(),
        fallbackReviewer: "owner@example.com",
      });
    expect(started.status).toBe(201);
    expect(started.body.items).toBeGreaterThan(0);
    const id = started.body.id as string;
    const deps = { db: stack.database.db, clock };
    const settings = { remindMs: 48 * HOUR, undecidedAction: "keep" as const };
    const events = async () =>
      (
        await stack.database.db.query<{ event: string; details: Record<string, unknown> }>(
          `SELECT event, details FROM notification_outbox WHERE event LIKE 'campaign.%' ORDER BY id`,
        )
      ).map((r) => r.event);

    expect(await campaignPass(deps, settings)).toEqual({ reminded: 0, closed: 0 });
    clock.advance(25 * HOUR); // 47 h before the due date
    expect(await campaignPass(deps, settings)).toEqual({ reminded: 1, closed: 0 });
    expect(await campaignPass(deps, settings)).toEqual({ reminded: 0, closed: 0 });
    expect(await events()).toEqual(["campaign.reminder"]);
    clock.advance(47 * HOUR);
    expect(await campaignPass(deps, settings)).toEqual({ reminded: 0, closed: 1 });
    const closed = (await adminApi(stack)(`/campaigns/${id}`)).body;
    expect(closed).toMatchObject({
      status: "closed",
      closedBy: "scheduler (due date)",
      closeSummary: { kept: 0, revoked: 0, undecided: started.body.items, undecidedAction: "keep" },
    });
    expect(await events()).toEqual(["campaign.reminder", "campaign.closed"]);
    expect((await adminApi(stack)(`/denies`)).body.denies).toEqual([]);
  });
});

/**
 * The same pass driven by the service's own scheduler (its loop, every SCHEDULER_TICK_MS), with
 * CAMPAIGN_UNDECIDED_AT_CLOSE=revoke read from the environment: the reminder, then the close at
 * the due date revokes what nobody decided, and the workers take it off the platform.
 */
describe("the scheduler reminds and closes a campaign, revoking the undecided (CAMPAIGN_UNDECIDED_AT_CLOSE=revoke)", () => {
  let stack: Stack;
  const clock = new ManualClock();
  const HOUR = 3_600_000;
  const users: Record<string, string> = {};

  beforeAll(async () => {
    stack = await startStack({
      clock,
      env: {
        SCHEDULER_TICK_MS: "100",
        RESYNC_CRON: "off",
        CAMPAIGN_REMIND_HOURS: "48",
        CAMPAIGN_UNDECIDED_AT_CLOSE: "revoke",
      },
    });
    const group = await idp(stack).createGroup("Marketing");
    for (const name of ["s1@example.com", "s2@example.com"]) {
      users[name] = await idp(stack).createUser(name);
      await idp(stack).patch(`/Groups/${group}`, [{ op: "add", path: "members", value: [{ value: users[name] }] }]);
    }
    await waitForQueueIdle(stack);
  });
  afterAll(async () => stack?.close());

  const held = async (userName: string) =>
    (await emulatorState(stack)).dashboardUsers
      .find((u) => u.userName === userName)
      ?.permissions.appGroup.find((w) => w.appGroupName === "EU Production")?.appGroupPermissions;
  const events = async () =>
    (
      await stack.database.db.query<{ event: string }>(
        `SELECT event FROM notification_outbox WHERE event LIKE 'campaign.%' ORDER BY id`,
      )
    ).map((r) => r.event);

  it("reminds, then closes at the due date and the undecided grants leave the platform", async () => {
    expect(stack.service.scheduler).toBeDefined();
    expect(await held("s2@example.com")).toEqual(["basic_access", "send_campaigns_canvases"]);
    const post = (path: string, body: object) =>
      request(stack.service.url).post(`/admin/api${path}`).set("Authorization", `Bearer ${ADMIN_TOKEN}`).send(body);
    const started = await post("/campaigns", {
      name: "Scheduled",
      scope: { kind: "workspace", workspace: "EU Production" },
      dueAt: new Date(clock.now().getTime() + 72 * HOUR).toISOString(),
      fallbackReviewer: "owner@example.com",
    });
    expect(started.status, started.text).toBe(201);
    const id = started.body.id as string;
    const items = (await adminApi(stack)(`/campaigns/${id}/items?as=owner@example.com`)).body.items as {
      id: string;
      userName: string;
    }[];
    // s1's grants are kept by a reviewer; s2's are left undecided.
    const s1 = items.filter((i) => i.userName === "s1@example.com").map((i) => i.id);
    const s2 = items.filter((i) => i.userName === "s2@example.com");
    expect(s1.length).toBeGreaterThan(0);
    expect(s2.length).toBeGreaterThan(0);
    const kept = await post(`/campaigns/${id}/decisions`, { as: "owner@example.com", decision: "keep", items: s1 });
    expect(kept.body).toMatchObject({ decided: s1.length });

    clock.advance(25 * HOUR); // 47 h before the due date: the scheduler's next tick reminds.
    await eventually("the scheduler's reminder", async () => (await events()).includes("campaign.reminder"));
    expect((await adminApi(stack)(`/campaigns/${id}`)).body.status).not.toBe("closed");

    clock.advance(47 * HOUR);
    await eventually(
      "the scheduler's close",
      async () => (await adminApi(stack)(`/campaigns/${id}`)).body.status === "closed",
    );
    expect((await adminApi(stack)(`/campaigns/${id}`)).body).toMatchObject({
      closedBy: "scheduler (due date)",
      closeSummary: { kept: s1.length, revoked: s2.length, undecided: s2.length, undecidedAction: "revoke" },
    });
    // One revoke notified per undecided item, then the close.
    expect(await events()).toEqual(["campaign.reminder", ...s2.map(() => "campaign.revoked"), "campaign.closed"]);
    await eventually("the undecided grants off the platform", async () => (await held("s2@example.com")) === undefined);
    expect(await held("s1@example.com")).toEqual(["basic_access", "send_campaigns_canvases"]);
    const denies = (await adminApi(stack)(`/denies?user=${users["s2@example.com"]}`)).body.denies as unknown[];
    expect(denies).toHaveLength(s2.length);
  });
});
