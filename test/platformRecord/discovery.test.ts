import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/clock.js";
import { analysePending, type AnalysisDeps } from "../../src/platformRecord/findings.js";
import { listUnmanaged } from "../../src/platformRecord/unmanaged.js";
import { idp, startStack, type Stack } from "../support/stack.js";
import { accountsNamed, platformScim, requestsTo, SCIM_USER } from "../reconcile/helpers.js";
import { discoverDebits, insertEvents, recordingHandlers, unmanagedAlerts, unmanagedRow } from "./helpers.js";

/**
 * The discovery lane (src/platformRecord/discovery.ts): at most UNMANAGED_LOOKUPS_PER_DAY lookups
 * per UTC day, none while the reconcile queue has work due, none past verification's allowance,
 * and an account the IdP later provisions is adopted and leaves the list. Two analyses at once
 * handle each event once. The emulator counts the lookups; the ledger must agree.
 */

const LOOKUP = "GET /scim/v2/Users";
const MINUTE = 60_000;
const added = (account: string, at: Date) => ({
  at,
  actor: "ops-admin@example.com",
  event: "Added Account",
  account,
});

describe("the discovery lane", () => {
  let stack: Stack;
  const clock = new ManualClock();
  let deps: AnalysisDeps;
  const drain = async () => {
    while (await stack.service.reconciliation!.worker.runOnce());
  };
  const discovery = () => stack.service.discovery!;
  const handMade = (userName: string) =>
    platformScim(stack.emulator.url).create({
      schemas: [SCIM_USER],
      userName,
      name: { givenName: "Hand", familyName: "Made" },
      department: "agency",
      permissions: {
        companyPermissions: [],
        appGroup: [{ appGroupName: "EU Production", appGroupPermissions: ["basic_access"] }],
      },
    });

  beforeAll(async () => {
    stack = await startStack({
      clock,
      workers: false,
      env: { UNMANAGED_LOOKUPS_PER_DAY: "2", PLATFORM_SCIM_DAILY_BUDGET: "100" },
    });
    deps = {
      db: stack.service.db,
      clock,
      handlers: recordingHandlers().handlers,
      policy: { ownWriteWindowMinutes: 10 },
    };
  });
  afterAll(async () => {
    await stack?.close();
  });

  it("waits while the reconcile queue has work due, then looks up", async () => {
    expect((await handMade("first@example.com")).status).toBe(201);
    await insertEvents(stack.database.db, [added("first@example.com", clock.now())]);
    await analysePending(deps);
    const marketing = await idp(stack).createGroup("Marketing");
    const id = await idp(stack).createUser("busy@example.com");
    await idp(stack).patch(`/Groups/${marketing}`, [{ op: "add", path: "members", value: [{ value: id }] }]);
    const before = await requestsTo(stack, LOOKUP);
    expect(await discovery().runOnce()).toMatchObject({ lookups: 0, stopped: "queue-busy" });
    expect(await requestsTo(stack, LOOKUP)).toBe(before);
    await drain();
    expect(await accountsNamed(stack, "busy@example.com")).toHaveLength(1);
    expect(await discovery().runOnce()).toMatchObject({ lookups: 1, confirmed: 1, stopped: "none-left" });
    expect(await requestsTo(stack, LOOKUP)).toBe(before + 1);
    expect(await discoverDebits(stack.database.db)).toBe(1);
  });

  it("looks up at most UNMANAGED_LOOKUPS_PER_DAY a UTC day, and goes on the next day", async () => {
    clock.advance(MINUTE);
    await insertEvents(stack.database.db, [
      added("second@example.com", clock.now()),
      added("third@example.com", new Date(clock.now().getTime() + 1)),
    ]);
    await analysePending(deps);
    const before = await requestsTo(stack, LOOKUP);
    // One of today's two was spent by the test before: one more, then the cap.
    expect(await discovery().runOnce()).toMatchObject({ lookups: 1, absent: 1, stopped: "daily-cap" });
    expect(await requestsTo(stack, LOOKUP)).toBe(before + 1);
    expect(await unmanagedRow(stack.database.db, "third@example.com")).toMatchObject({ state: "candidate" });
    const now = clock.now();
    clock.advance(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime() + MINUTE);
    expect(await discovery().runOnce()).toMatchObject({ lookups: 1, absent: 1, stopped: "none-left" });
    expect(await requestsTo(stack, LOOKUP)).toBe(before + 2);
    expect(await discoverDebits(stack.database.db)).toBe(3);
    expect((await listUnmanaged(stack.service.db, { all: true })).map((a) => [a.userName, a.state])).toEqual([
      ["first@example.com", "confirmed"],
      ["second@example.com", "absent"],
      ["third@example.com", "absent"],
    ]);
  });

  it("spends nothing past verification's allowance (the lowest lane)", async () => {
    clock.advance(24 * 60 * MINUTE); // a new day: the lane's own cap is not what stops it here
    await insertEvents(stack.database.db, [added("late@example.com", clock.now())]);
    await analysePending(deps);
    // 100 a day, 10% reserve, 10% headroom: verification (and discovery) may bring the day to 80.
    await stack.database.db.query(
      `INSERT INTO budget_debits (spent_at, action) SELECT $1, 'update' FROM generate_series(1, 79 - (SELECT count(*)::int FROM budget_debits WHERE spent_at >= $2))`,
      [
        clock.now(),
        new Date(Date.UTC(clock.now().getUTCFullYear(), clock.now().getUTCMonth(), clock.now().getUTCDate())),
      ],
    );
    const before = await requestsTo(stack, LOOKUP);
    expect(await discovery().runOnce()).toMatchObject({ lookups: 1, stopped: "none-left" }); // the 80th
    await insertEvents(stack.database.db, [added("later@example.com", clock.now())]);
    await analysePending(deps);
    expect(await discovery().runOnce()).toMatchObject({ lookups: 0, stopped: "budget" });
    expect(await requestsTo(stack, LOOKUP)).toBe(before + 1);
  });

  it("an account the IdP then provisions is adopted by the reconciler and leaves the list", async () => {
    expect(await listUnmanaged(stack.service.db)).toEqual([
      expect.objectContaining({ userName: "first@example.com", state: "confirmed" }),
      expect.objectContaining({ userName: "later@example.com", state: "candidate" }),
    ]);
    const marketing = (await stack.database.db.query(`SELECT id FROM idp_groups WHERE display_name = 'Marketing'`))[0]
      .id as string;
    const id = await idp(stack).createUser("first@example.com");
    await idp(stack).patch(`/Groups/${marketing}`, [{ op: "add", path: "members", value: [{ value: id }] }]);
    await drain();
    expect((await listUnmanaged(stack.service.db)).map((a) => a.userName)).toEqual(["later@example.com"]);
    await discovery().runOnce();
    expect(await unmanagedRow(stack.database.db, "first@example.com")).toMatchObject({ state: "adopted" });
    expect(await unmanagedAlerts(stack.database.db)).toHaveLength(1);
  });

  it("two analyses at once handle each event once", async () => {
    clock.advance(MINUTE);
    const base = clock.now().getTime();
    await insertEvents(
      stack.database.db,
      Array.from({ length: 60 }, (_, i) => ({
        at: new Date(base + i),
        actor: `u${i}@example.com`,
        event: i % 2 ? "Signed In" : "Added Account",
        account: `many${i}@example.com`,
      })),
    );
    const a = recordingHandlers();
    const b = recordingHandlers();
    const [fa, fb] = await Promise.all([
      analysePending({ ...deps, handlers: a.handlers, batchSize: 7 }),
      analysePending({ ...deps, handlers: b.handlers, batchSize: 7 }),
    ]);
    expect(fa.candidates + fb.candidates).toBe(30);
    expect(fa.activity + fb.activity).toBe(30);
    expect(a.calls.activity.length + b.calls.activity.length).toBe(30);
    expect(new Set([...a.calls.activity, ...b.calls.activity].map((e) => e.id)).size).toBe(30);
    const [left] = await stack.database.db.query(
      `SELECT count(*)::int AS n FROM platform_events WHERE handled_at IS NULL`,
    );
    expect(left.n).toBe(0);
  });

  it("an event whose handler fails is left for the next analysis; the others are handled", async () => {
    clock.advance(MINUTE);
    await insertEvents(stack.database.db, [
      { at: clock.now(), actor: "x@example.com", event: "Signed In", account: "x@example.com" },
      { at: new Date(clock.now().getTime() + 1), actor: "y@example.com", event: "Signed In", account: "y@example.com" },
    ]);
    const failing = recordingHandlers();
    let failed = 0;
    failing.handlers.recordActivity = async (event) => {
      if (event.account === "x@example.com" && !failed++) throw new Error("activity store unavailable");
      failing.calls.activity.push(event);
    };
    expect(await analysePending({ ...deps, handlers: failing.handlers })).toMatchObject({ activity: 1 });
    expect(failing.calls.activity.map((e) => e.account)).toEqual(["y@example.com"]);
    expect(await analysePending({ ...deps, handlers: failing.handlers })).toMatchObject({ activity: 1 });
    expect(failing.calls.activity.map((e) => e.account)).toEqual(["y@example.com", "x@example.com"]);
  });

  it("looks up on one replica at a time: a pass finds the lane's lock held and spends nothing", async () => {
    clock.advance(MINUTE);
    await insertEvents(stack.database.db, [added("locked@example.com", clock.now())]);
    await analysePending(deps);
    const before = await requestsTo(stack, LOOKUP);
    const pass = await stack.database.db.session(async (other) => {
      await other.query(`SELECT pg_advisory_lock(7429045)`); // the lane's lock, held by "another replica"
      try {
        return await discovery().runOnce();
      } finally {
        await other.query(`SELECT pg_advisory_unlock(7429045)`);
      }
    });
    expect(pass).toMatchObject({ lookups: 0, stopped: "another-replica" });
    expect(await requestsTo(stack, LOOKUP)).toBe(before);
  });
});
