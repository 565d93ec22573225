import { describe, expect, it } from "vitest";
import { heldItem, presentHold } from "../../src/admin/approvals.js";
import { presentLogEntry, presentLogRow } from "../../src/admin/log.js";
import { presentBudget, presentQueue } from "../../src/admin/queue.js";
import type { BudgetStatus } from "../../src/reconcile/budget/budgetLedger.js";
import type { Hold } from "../../src/db/reconcile/holdRepository.js";
import type { LogEntry } from "../../src/db/reconcile/logRepository.js";
import type { QueueStatus } from "../../src/reconcile/queueStatus.js";

/**
 * One presenter per admin resource (src/admin) serves the JSON API and the pages. The API's
 * shapes are a contract with scripts: these pin them exactly, as `res.json` sends them.
 */
const asJson = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;

const at = new Date("2026-11-20T09:15:00Z");
/** GET /admin/api/log/:id for one entry: every stored fact, the trigger as recorded. */
const entryJson = {
  id: "42",
  at: "2026-11-20T09:15:00.000Z",
  reconcileId: "rc-1",
  userId: "5dbe7d8c-acfb-4191-aa34-932284491259",
  userName: "ada@example.com",
  action: "update",
  outcome: "succeeded",
  trigger: {
    kind: "idp",
    requestId: "req-42",
    method: "PATCH",
    resource: "Groups/g-1",
    change: { what: "added-to-group", groupName: "Engineering" },
  },
  changes: [{ kind: "set", path: "department", old: "sales", new: "engineering" }],
  before: null,
  after: null,
  platformStatus: 200,
  callsSpent: 1,
  error: null,
  note: null,
  actor: null,
} as const;
const entry: LogEntry = { ...entryJson, at, changes: [...entryJson.changes] };

describe("admin presenters: the JSON API's shapes", () => {
  it("a log entry: every stored fact, the trigger as recorded", () => {
    expect(asJson(presentLogEntry(entry))).toEqual(entryJson);
  });

  it("a log entry's list row (pages, export): the same columns, the trigger in words", () => {
    expect(presentLogRow(presentLogEntry(entry))).toEqual({
      id: "42",
      at,
      userName: "ada@example.com",
      action: "update",
      outcome: "succeeded",
      trigger: "added to group Engineering",
      platformStatus: 200,
      callsSpent: 1,
      actor: null,
    });
  });

  it("a hold, and the Approvals page's row made from it", () => {
    const hold: Hold = {
      userId: "5dbe7d8c-acfb-4191-aa34-932284491259",
      kind: "email_change",
      userName: null,
      detail: { from: "ada@example.com", to: "ada.l@example.com" },
      createdAt: at,
      decision: "approved",
      decidedBy: "local admin",
      decidedAt: new Date("2026-11-20T10:00:00Z"),
    };
    expect(asJson(presentHold(hold))).toEqual({
      userId: hold.userId,
      kind: "email_change",
      userName: null,
      detail: hold.detail,
      createdAt: "2026-11-20T09:15:00.000Z",
      decision: "approved",
      decidedBy: "local admin",
      decidedAt: "2026-11-20T10:00:00.000Z",
    });
    expect(asJson(presentHold({ ...hold, decision: null, decidedBy: null, decidedAt: null }))).toMatchObject({
      decision: null,
      decidedBy: null,
      decidedAt: null,
    });
    expect(heldItem(presentHold(hold), "ada@example.com")).toEqual({
      id: hold.userId,
      kind: "email_change",
      userName: hold.userId,
      summary:
        "userName changed ada@example.com → ada.l@example.com: approving deletes the platform account and creates it under the new name",
      heldAt: at,
    });
  });

  it("the budget and the queue", () => {
    const budget: BudgetStatus = {
      limit: 5000,
      reserve: 500,
      used: 1250,
      spareForVerification: 100,
      remaining: 3250,
      remainingWithReserve: 3750,
      resetsAt: new Date("2026-11-21T00:00:00Z"),
      window: "utc-day",
    };
    const expectedBudget = {
      limit: 5000,
      used: 1250,
      reserve: 500,
      remaining: 3250,
      remainingWithReserve: 3750,
      resetsAt: "2026-11-21T00:00:00.000Z",
      window: budget.window,
      platformAnnounced: null,
    };
    expect(asJson(presentBudget(budget))).toEqual(expectedBudget);
    const announced = { announced: 20_000, header: "x-ratelimit-limit", seenAt: at };
    expect(asJson(presentBudget(budget, announced))).toEqual({
      ...expectedBudget,
      platformAnnounced: { limit: 20_000, header: "x-ratelimit-limit", seenAt: "2026-11-20T09:15:00.000Z" },
    });
    const pending = [{ priority: 2, name: "create", action: "create", count: 3, ready: 1, settling: 2 }];
    const queue: QueueStatus = {
      pending,
      total: 3,
      settling: { count: 2, nextAt: at },
      pendingDeletes: { count: 4, nextAt: at },
      parked: 1,
      oldestEnqueuedAt: at,
      eta: null,
      budget,
    };
    expect(asJson(presentQueue(queue))).toEqual({
      pending,
      total: 3,
      settling: { count: 2, nextAt: "2026-11-20T09:15:00.000Z" },
      pendingDeletes: { count: 4, nextAt: "2026-11-20T09:15:00.000Z" },
      parked: 1,
      oldestEnqueuedAt: "2026-11-20T09:15:00.000Z",
      eta: null,
      budget: expectedBudget,
    });
    expect(
      asJson(presentQueue({ ...queue, settling: { count: 0, nextAt: null }, oldestEnqueuedAt: null })),
    ).toMatchObject({ settling: { count: 0, nextAt: null }, oldestEnqueuedAt: null });
  });
});
