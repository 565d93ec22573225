import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { debitBudget, getBudgetStatus } from "../../src/reconcile/budget/budgetLedger.js";
import { budgetPolicy, estimateDrain, nextUtcMidnight, windowStart } from "../../src/reconcile/budget/budget.js";
import { deprovisionThreshold, shouldHoldDeprovision } from "../../src/reconcile/breaker.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";

describe("budget windows (pure)", () => {
  it("a UTC day starts at midnight UTC and resets at the next", () => {
    const now = new Date("2026-11-21T23:59:59Z");
    expect(windowStart(now, "utc-day").toISOString()).toBe("2026-11-21T00:00:00.000Z");
    expect(nextUtcMidnight(now).toISOString()).toBe("2026-11-22T00:00:00.000Z");
  });
  it("the reserve is 10% by default, rounded up, and never the whole budget", () => {
    expect(budgetPolicy(5000, 10, "utc-day").reserve).toBe(500);
    expect(budgetPolicy(20, 10, "utc-day").reserve).toBe(2);
    expect(budgetPolicy(1, 50, "utc-day").reserve).toBe(0);
  });
  it("estimates when deferred work drains", () => {
    const now = new Date("2026-11-21T12:00:00Z");
    const reset = new Date("2026-11-22T00:00:00Z");
    expect(estimateDrain(now, 0, 10, 18, reset)).toBeNull();
    expect(estimateDrain(now, 5, 10, 18, reset)).toEqual(now);
    expect(estimateDrain(now, 42, 0, 18, reset)?.toISOString()).toBe("2026-11-24T00:00:00.000Z");
  });
  it("the mass-deprovision threshold is the larger of the minimum and the percentage", () => {
    expect(deprovisionThreshold({ minimum: 25, percent: 10 }, 100)).toBe(25);
    expect(deprovisionThreshold({ minimum: 25, percent: 10 }, 1000)).toBe(100);
    expect(shouldHoldDeprovision({ minimum: 25, percent: 10 }, 100, 20, 5)).toBe(false);
    expect(shouldHoldDeprovision({ minimum: 25, percent: 10 }, 100, 20, 6)).toBe(true);
  });
});

describe("budget ledger (PostgreSQL)", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => database?.drop());
  beforeEach(async () => {
    await database.db.query(`DELETE FROM budget_debits`);
  });

  it("never lets concurrent debits pass the limit, and keeps the reserve for reductions", async () => {
    const policy = budgetPolicy(20, 10, "utc-day");
    const now = new Date();
    const results = await Promise.all(
      Array.from({ length: 40 }, () => debitBudget(database.db, policy, now, { action: "create", kind: "ordinary" })),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(18);
    const refused = results.find((r) => !r.ok);
    expect(refused && !refused.ok && refused.resetsAt.toISOString()).toBe(nextUtcMidnight(now).toISOString());

    const deprovisions = await Promise.all(
      Array.from({ length: 5 }, () =>
        debitBudget(database.db, policy, now, { action: "deprovision", kind: "reduction" }),
      ),
    );
    expect(deprovisions.filter((r) => r.ok)).toHaveLength(2);
    const status = await getBudgetStatus(database.db, policy, now);
    expect(status).toMatchObject({ limit: 20, reserve: 2, used: 20, remaining: 0, remainingWithReserve: 0 });
  });

  it("counts a debit written first with a later time: each caller reads its clock before it waits for the lock", async () => {
    for (const window of ["utc-day", "rolling-24h"] as const) {
      await database.db.query(`DELETE FROM budget_debits`);
      const policy = budgetPolicy(2, 0, window);
      const later = new Date("2026-11-21T12:00:00.500Z");
      const earlier = new Date("2026-11-21T12:00:00.100Z");
      expect((await debitBudget(database.db, policy, later, { action: "create", kind: "ordinary" })).ok).toBe(true);
      expect((await debitBudget(database.db, policy, later, { action: "create", kind: "ordinary" })).ok).toBe(true);
      // A worker (or a replica) that read 12:00:00.100 and got the lock last: the budget is spent.
      expect((await debitBudget(database.db, policy, earlier, { action: "create", kind: "ordinary" })).ok).toBe(false);
      expect(await getBudgetStatus(database.db, policy, earlier)).toMatchObject({ used: 2, remaining: 0 });
    }
  });

  it("a new UTC day starts a fresh window", async () => {
    const policy = budgetPolicy(3, 0, "utc-day");
    const day1 = new Date("2026-11-21T23:00:00Z");
    for (let i = 0; i < 3; i++)
      expect((await debitBudget(database.db, policy, day1, { action: "update", kind: "ordinary" })).ok).toBe(true);
    expect((await debitBudget(database.db, policy, day1, { action: "update", kind: "ordinary" })).ok).toBe(false);
    expect(
      (await debitBudget(database.db, policy, new Date("2026-11-22T00:00:01Z"), { action: "update", kind: "ordinary" }))
        .ok,
    ).toBe(true);
  });

  it("a rolling window frees a slot 24 hours after the oldest debit", async () => {
    const policy = budgetPolicy(2, 0, "rolling-24h");
    const t0 = new Date("2026-11-21T10:00:00Z");
    const t1 = new Date("2026-11-21T16:00:00Z");
    await debitBudget(database.db, policy, t0, { action: "update", kind: "ordinary" });
    await debitBudget(database.db, policy, t1, { action: "update", kind: "ordinary" });
    const refused = await debitBudget(database.db, policy, new Date("2026-11-22T09:00:00Z"), {
      action: "update",
      kind: "ordinary",
    });
    expect(refused.ok).toBe(false);
    expect(!refused.ok && refused.resetsAt.toISOString()).toBe("2026-11-22T10:00:00.000Z");
    expect(
      (await debitBudget(database.db, policy, new Date("2026-11-22T10:00:01Z"), { action: "update", kind: "ordinary" }))
        .ok,
    ).toBe(true);
  });
});
