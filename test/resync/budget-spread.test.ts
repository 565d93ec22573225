import request from "supertest";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ManualClock } from "../../src/clock.js";
import { getBudgetStatus } from "../../src/reconcile/budget/budgetLedger.js";
import { parseDashboardUser } from "../../src/emulator/dashboard/users.js";
import { toPlatformResource } from "../../src/platform/scim.js";
import { nextUtcMidnight } from "../../src/reconcile/budget/budget.js";
import { ADMIN_TOKEN, adminApi, emulatorStats, idp, startStack, type Stack } from "../support/stack.js";

/**
 * 12,000 users with accounts and a daily budget of 5,000: a verifying resync spreads over three
 * days on spare budget only (never the reserve, never the headroom kept for live changes), and a
 * deprovision issued in the middle is served at once. Both clocks (the connector's and the
 * emulator's) are moved by the test.
 */
const USERS = 12_000;

describe("full resync within the budget", () => {
  const clock = new ManualClock();
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({
      clock,
      workers: false,
      env: {
        RESYNC_VERIFY_HEADROOM_PERCENT: "5",
        SCHEDULER_TICK_MS: "200",
        RESYNC_CRON: "off",
        DATABASE_POOL_SIZE: "20",
      },
    });
  }, 300_000);
  afterAll(async () => stack?.close());

  it("verifies 12,000 accounts over three days and serves a deprovision mid-resync within a minute", async () => {
    const scim = idp(stack);
    const ids: string[] = [];
    for (let i = 0; i < USERS; i += 16) {
      ids.push(
        ...(await Promise.all(
          Array.from({ length: Math.min(16, USERS - i) }, (_, k) =>
            scim.createUser(`u${String(i + k).padStart(5, "0")}@example.com`),
          ),
        )),
      );
    }
    const group = await scim.createGroup("Marketing");
    for (let i = 0; i < ids.length; i += 1000) {
      await scim.patch(`/Groups/${group}`, [
        { op: "add", path: "members", value: ids.slice(i, i + 1000).map((value) => ({ value })) },
      ]);
    }
    // The accounts already exist on the platform, exactly as last applied (seeded directly: creating
    // them through the API would itself take three days of budget).
    const { db } = stack.database;
    const { desired: template } = await stack.service.reconciliation!.reconciler.plan(ids[0]!);
    const rows: { userId: string; platformId: string; applied: object; userName: string }[] = [];
    ids.forEach((id, i) => {
      const userName = `u${String(i).padStart(5, "0")}@example.com`;
      const desired = { ...template!, userName, givenName: userName.split("@")[0]! };
      const parsed = parseDashboardUser(toPlatformResource(desired));
      if (!parsed.ok) throw new Error(parsed.detail);
      const account = stack.emulator.state.dashboardUsers.create(parsed.value, clock.now())!;
      rows.push({ userId: id, platformId: account.id, applied: desired, userName });
    });
    await db.query(
      `INSERT INTO platform_accounts (user_id, user_name, platform_id, state, last_applied, applied_at)
       SELECT u, n, p, 'active', a, now() FROM unnest($1::uuid[], $2::text[], $3::text[], $4::jsonb[]) AS t(u, n, p, a)`,
      [
        rows.map((r) => r.userId),
        rows.map((r) => r.userName),
        rows.map((r) => r.platformId),
        rows.map((r) => JSON.stringify(r.applied)),
      ],
    );
    // The seeding is right only if the connector sees nothing to change.
    expect((await stack.service.reconciliation!.reconciler.plan(ids[123]!)).plan.action).toBe("none");
    await db.query(`DELETE FROM reconcile_queue`);
    // Start just after midnight (UTC) on both clocks, so that a day is a whole budget window.
    clock.advance(nextUtcMidnight(clock.now()).getTime() - clock.now().getTime() + 1_000);

    await stack.service.reconciliation!.worker.start();
    const started = await request(stack.service.url)
      .post("/admin/api/resync")
      .set("Authorization", `Bearer ${ADMIN_TOKEN}`)
      .send({ verify: true });
    expect(started.status).toBe(202);
    const runId = started.body.runId as string;
    const run = async () => (await adminApi(stack)(`/runs/${runId}`)).body;

    const dailyCounts: number[] = [];
    let deprovisionMs = -1;
    let mostUsed = 0;
    // A day is over when the connector may spend nothing more on verification until the next
    // window (no spare budget left) and no row is claimed (no call in flight), or the run is done.
    const daySpent = async () => {
      const { spareForVerification } = await getBudgetStatus(db, stack.service.reconciliation!.budget, clock.now());
      const claimed: { n: number }[] = await db.query(
        `SELECT count(*)::int AS n FROM reconcile_queue WHERE claimed_by IS NOT NULL`,
      );
      return spareForVerification === 0 && claimed[0]!.n === 0;
    };
    for (let day = 1; day <= 4; day++) {
      // Work until the day's spare budget is spent (or the run is done).
      await vi.waitFor(
        async () => {
          const r = await run();
          mostUsed = Math.max(mostUsed, (await emulatorStats(stack)).scimDaily.used);
          if (r.status !== "running") return;
          if (day === 1 && deprovisionMs < 0 && r.progress.verified > 1_000)
            deprovisionMs = await deprovisionOne(ids[ids.length - 1]!);
          if (!(await daySpent()))
            throw new Error(`day ${day}: ${r.progress.verified} verified so far, spare budget left`);
        },
        { timeout: 600_000, interval: 200 },
      );
      expect(mostUsed).toBeLessThanOrEqual(4_500);
      dailyCounts.push((await emulatorStats(stack)).scimDaily.used);
      if ((await run()).status !== "running") break;
      clock.advance(86_400_000); // the next UTC day, on both clocks
    }

    const final = await run();
    expect(final.status).toBe("succeeded");
    expect(dailyCounts).toHaveLength(3); // spread over three days
    for (const count of dailyCounts) expect(count).toBeLessThanOrEqual(4_500); // never the reserve
    expect(dailyCounts[0]).toBeGreaterThanOrEqual(4_000);
    // The deprovisioned account is verified only if its turn came before the deactivation.
    expect(final.progress.verified).toBeGreaterThanOrEqual(USERS - 1);
    expect(final.progress.drifted).toBe(0);
    expect(deprovisionMs).toBeGreaterThanOrEqual(0);
    expect(deprovisionMs).toBeLessThan(60_000);
  }, 900_000);

  /** Deactivates a user (Okta's shape) and returns how long until the platform no longer holds the account. */
  async function deprovisionOne(userId: string): Promise<number> {
    const started = Date.now();
    await idp(stack).patch(`/Users/${userId}`, [{ op: "replace", value: { active: false } }]);
    const userName = "u11999@example.com";
    const gone = () => {
      if (stack.emulator.state.dashboardUsers.findByUserName(userName))
        throw new Error(`${userName} still on the platform`);
    };
    // Past a minute the returned time fails the test's own assertion (< 60 s).
    await vi.waitFor(gone, { timeout: 60_000, interval: 50 }).catch(() => undefined);
    return Date.now() - started;
  }
});
