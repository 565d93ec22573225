import { describe, expect, it } from "vitest";
import {
  halves,
  minimumRequests,
  planPushes,
  subscriptionEntry,
  toUnits,
  type PendingChange,
  type SubscriptionPayload,
} from "../../src/mirror/batching.js";
import { takeToken, bucketRule } from "../../src/mirror/pacing.js";
import { verdictOf } from "../../src/mirror/pushing.js";

const changes = (spec: Record<string, number | undefined>): PendingChange<null>[] =>
  Object.entries(spec).flatMap(([batchKey, n]) =>
    Array.from({ length: n ?? 0 }, (_, i) => ({
      key: `${batchKey}-${i}`,
      batchKey,
      version: String(i + 1),
      payload: null,
    })),
  );

describe("toUnits: one array per batch key, at most 50 identifiers", () => {
  it.each([
    { name: "empty", input: {}, sizes: [] },
    { name: "one state under 50", input: { subscribed: 7 }, sizes: [7] },
    { name: "exactly 50", input: { subscribed: 50 }, sizes: [50] },
    { name: "51 spills into a second array", input: { subscribed: 51 }, sizes: [50, 1] },
    {
      name: "states never share an array",
      input: { subscribed: 30, unsubscribed: 30, opted_in: 1 },
      sizes: [30, 30, 1],
    },
    { name: "10,000 of one state", input: { subscribed: 10_000 }, sizes: Array(200).fill(50) },
  ])("$name", ({ input, sizes }) => {
    const units = toUnits(changes(input as Record<string, number | undefined>));
    expect(units.map((u) => u.changes.length)).toEqual(sizes);
    for (const u of units) expect(new Set(u.changes.map((c) => c.batchKey))).toEqual(new Set([u.batchKey]));
  });
});

describe("planPushes: pack units, hand back a cut tail", () => {
  it.each([
    {
      name: "email: one unit per request",
      input: { a: 120 },
      per: 1,
      full: false,
      requests: [[50], [50], [20]],
      leftover: 0,
    },
    {
      name: "full claim drops the cut tail",
      input: { a: 120 },
      per: 1,
      full: true,
      requests: [[50], [50]],
      leftover: 20,
    },
    {
      name: "a full claim of one short unit is still sent",
      input: { a: 20 },
      per: 1,
      full: true,
      requests: [[20]],
      leftover: 0,
    },
    {
      name: "entries share a request",
      input: { g1: 60, g2: 10, g3: 50 },
      per: 50,
      full: false,
      requests: [[50, 10, 10, 50]],
      leftover: 0,
    },
    {
      name: "entries cap per request",
      input: { g: 130 },
      per: 2,
      full: false,
      requests: [[50, 50], [30]],
      leftover: 0,
    },
    {
      name: "full claim drops a half-empty last request",
      input: { g: 250 },
      per: 2,
      full: true,
      requests: [
        [50, 50],
        [50, 50],
      ],
      leftover: 50,
    },
    {
      name: "busy: partial units wait",
      input: { a: 120, b: 10 },
      per: 1,
      full: false,
      busy: true,
      requests: [[50], [50]],
      leftover: 30,
    },
    {
      name: "busy: a short request waits",
      input: { a: 150 },
      per: 2,
      full: false,
      busy: true,
      requests: [[50, 50]],
      leftover: 50,
    },
    {
      name: "busy: nothing full, nothing sent",
      input: { a: 49, b: 49 },
      per: 1,
      full: true,
      busy: true,
      requests: [],
      leftover: 98,
    },
    {
      name: "quiet: tails go",
      input: { a: 120, b: 10 },
      per: 1,
      full: false,
      busy: false,
      requests: [[50], [50], [20], [10]],
      leftover: 0,
    },
  ])("$name", ({ input, per, full, requests, leftover, ...rest }) => {
    const busy = "busy" in rest ? (rest as { busy: boolean }).busy : false;
    const plan = planPushes(toUnits(changes(input as Record<string, number | undefined>)), {
      unitsPerRequest: per,
      claimWasFull: full,
      busy,
    });
    expect(plan.requests.map((r) => r.map((u) => u.changes.length))).toEqual(requests);
    expect(plan.leftover).toHaveLength(leftover);
  });
});

describe("minimumRequests", () => {
  it.each([
    { input: { subscribed: 10_000 }, per: 1, min: 200 },
    { input: { subscribed: 5_001, unsubscribed: 4_999 }, per: 1, min: 101 + 100 },
    { input: { a: 2_500, b: 1 }, per: 50, min: 2 },
  ])("$min for $input", ({ input, per, min }) =>
    expect(minimumRequests(changes(input as Record<string, number | undefined>), per)).toBe(min),
  );
});

describe("subscriptionEntry: emails, phones and external ids go to their own array", () => {
  const entry = (type: SubscriptionPayload["type"], ids: string[]) =>
    subscriptionEntry({
      batchKey: "k",
      changes: ids.map((id, i) => ({
        key: id,
        batchKey: "k",
        version: String(i),
        payload: { group: "g1", type, id, state: "subscribed" },
      })),
    });
  it.each([
    { type: "email" as const, field: "emails" },
    { type: "phone" as const, field: "phones" },
    { type: "external_id" as const, field: "external_ids" },
  ])("$type → $field", ({ type, field }) => {
    expect(entry(type, ["x", "y"])).toEqual({
      subscription_group_id: "g1",
      subscription_state: "subscribed",
      [field]: ["x", "y"],
    });
  });
});

describe("halves", () => {
  it.each([
    { n: 2, sizes: [1, 1] },
    { n: 5, sizes: [3, 2] },
    { n: 50, sizes: [25, 25] },
  ])("$n", ({ n, sizes }) => {
    const [a, b] = halves(Array.from({ length: n }, (_, i) => i));
    expect([a.length, b.length]).toEqual(sizes);
  });
});

describe("verdictOf", () => {
  const headers = new Headers();
  it.each([
    { outcome: { kind: "ok", status: 200, body: {}, headers, attempts: 1 } as const, verdict: "ok" },
    {
      outcome: { kind: "http_error", status: 400, body: { message: "bad" }, attempts: 1 } as const,
      verdict: "rejected",
    },
    { outcome: { kind: "http_error", status: 422, body: "nope", attempts: 1 } as const, verdict: "rejected" },
    { outcome: { kind: "http_error", status: 401, body: {}, attempts: 1 } as const, verdict: "retry:auth" },
    { outcome: { kind: "http_error", status: 403, body: {}, attempts: 1 } as const, verdict: "retry:auth" },
    { outcome: { kind: "http_error", status: 408, body: {}, attempts: 1 } as const, verdict: "retry:transient" },
    { outcome: { kind: "http_error", status: 503, body: {}, attempts: 3 } as const, verdict: "retry:transient" },
    {
      outcome: { kind: "rate_limited", until: new Date(), sent: true, attempts: 1 } as const,
      verdict: "retry:rate_limited",
    },
    { outcome: { kind: "rate_limited", until: new Date(), sent: false, attempts: 0 } as const, verdict: "retry:paced" },
    { outcome: { kind: "uncertain", reason: "timeout", attempts: 3 } as const, verdict: "retry:transient" },
    { outcome: { kind: "unreachable", reason: "ECONNREFUSED", attempts: 3 } as const, verdict: "retry:transient" },
  ])("$outcome.kind $outcome.status → $verdict", ({ outcome, verdict }) => {
    const v = verdictOf(outcome);
    expect(v.kind === "retry" ? `retry:${v.cause}` : v.kind).toBe(verdict);
  });
});

describe("token bucket never exceeds the limit in any window", () => {
  it.each([
    { limit: 5_000, windowMs: 60_000 },
    { limit: 10, windowMs: 1_000 },
  ])("$limit per $windowMs ms", ({ limit, windowMs }) => {
    const rule = bucketRule(limit, windowMs);
    let state;
    const sent: number[] = [];
    // Greedy sender over three windows, 1 ms steps.
    for (let t = 0; t < windowMs * 3; t += Math.max(1, Math.floor(windowMs / 10_000))) {
      for (;;) {
        const r = takeToken(rule, state, t);
        state = r.state;
        if (r.waitMs > 0) break;
        sent.push(t);
      }
    }
    let maxInWindow = 0;
    let lo = 0;
    for (let hi = 0; hi < sent.length; hi++) {
      while (sent[hi] - sent[lo] >= windowMs) lo++;
      maxInWindow = Math.max(maxInWindow, hi - lo + 1);
    }
    expect(maxInWindow).toBeLessThanOrEqual(limit);
    expect(maxInWindow).toBeGreaterThanOrEqual(limit * 0.9);
  });
});
