import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { campaignPass } from "../../src/admin/campaigns/index.js";
import { ManualClock } from "../../src/clock.js";
import { ADMIN_TOKEN, adminApi, idp, startStack, type Stack } from "../support/stack.js";

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
