import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  DAY,
  HOUR,
  MINUTE,
  RATE_LIMITS,
  rateLimitHeaders,
  takeFromWindow,
  windowStartOf,
  type RateLimitRule,
} from "../../src/emulator/pipeline/rateLimits.js";
import { startClient, type Client } from "./harness.js";

describe("rate-limit windows (pure)", () => {
  const rule = { limit: 2, windowMs: MINUTE };
  it.each([
    ["first request in a window", undefined, 30_000, true, 1, 60_000],
    ["last allowed request", { windowStart: 0, used: 1 }, 59_999, true, 0, 60_000],
    ["over the limit", { windowStart: 0, used: 2 }, 59_000, false, 0, 60_000],
    ["a new window resets the count", { windowStart: 0, used: 2 }, 60_000, true, 1, 120_000],
  ])("%s", (_label, counter, now, allowed, remaining, resetAtMs) => {
    const { decision } = takeFromWindow(counter, now, rule);
    expect(decision).toMatchObject({ allowed, remaining, resetAtMs });
  });

  it("Retry-After is the whole seconds to the window end, at least 1", () => {
    expect(takeFromWindow({ windowStart: 0, used: 2 }, 59_000, rule).decision.retryAfterSeconds).toBe(1);
    expect(takeFromWindow({ windowStart: 0, used: 2 }, 59_999, rule).decision.retryAfterSeconds).toBe(1);
    expect(takeFromWindow({ windowStart: 0, used: 2 }, 10_500, rule).decision.retryAfterSeconds).toBe(50);
  });

  it("a rejected request is not counted", () => {
    expect(takeFromWindow({ windowStart: 0, used: 2 }, 1_000, rule).counter.used).toBe(2);
  });

  it("a day window starts at UTC midnight", () => {
    const t = Date.UTC(2026, 4, 17, 23, 59, 59);
    expect(windowStartOf(t, DAY)).toBe(Date.UTC(2026, 4, 17));
    expect(windowStartOf(t, HOUR)).toBe(Date.UTC(2026, 4, 17, 23));
  });

  it("headers: X-RateLimit-Limit/-Remaining/-Reset always, Retry-After only on a 429", () => {
    const ok = rateLimitHeaders({ allowed: true, limit: 10, remaining: 3, resetAtMs: 120_000, retryAfterSeconds: 0 });
    expect(ok).toEqual({ "X-RateLimit-Limit": "10", "X-RateLimit-Remaining": "3", "X-RateLimit-Reset": "120" });
    expect(
      rateLimitHeaders({ allowed: false, limit: 10, remaining: 0, resetAtMs: 120_000, retryAfterSeconds: 7 })[
        "Retry-After"
      ],
    ).toBe("7");
  });
});

/** The Limits table: each endpoint's bucket, its size and its window, over HTTP. */
const ENDPOINTS: Array<{ method: string; path: string; body?: unknown; rule: RateLimitRule }> = [
  { method: "POST", path: "/users/track", body: { attributes: [{ external_id: "u1" }] }, rule: RATE_LIMITS.usersTrack },
  {
    method: "POST",
    path: "/v2/subscription/status/set",
    body: {
      subscription_groups: [{ subscription_group_id: "g", subscription_state: "subscribed", external_ids: ["u1"] }],
    },
    rule: RATE_LIMITS.subscriptionSet,
  },
  {
    method: "POST",
    path: "/subscription/status/set",
    body: { subscription_group_id: "g", subscription_state: "subscribed", external_id: "u1" },
    rule: RATE_LIMITS.subscriptionSet,
  },
  {
    method: "GET",
    path: "/subscription/status/get?subscription_group_id=g&external_id=u1",
    rule: RATE_LIMITS.subscriptionGet,
  },
  {
    method: "POST",
    path: "/email/status",
    body: { email: "a@b.co", subscription_state: "subscribed" },
    rule: RATE_LIMITS.emailStatus,
  },
  { method: "POST", path: "/email/blacklist", body: { email: "a@b.co" }, rule: RATE_LIMITS.emailBlocklist },
  { method: "POST", path: "/email/bounce/remove", body: { email: "a@b.co" }, rule: RATE_LIMITS.emailBounceRemove },
  { method: "POST", path: "/email/spam/remove", body: { email: "a@b.co" }, rule: RATE_LIMITS.emailSpamRemove },
  {
    method: "POST",
    path: "/sms/invalid_phone_numbers/remove",
    body: { phone_numbers: ["+15550000001"] },
    rule: RATE_LIMITS.smsInvalidRemove,
  },
  { method: "GET", path: "/sms/invalid_phone_numbers", rule: RATE_LIMITS.smsInvalidList },
  { method: "POST", path: "/users/delete", body: { external_ids: ["zz"] }, rule: RATE_LIMITS.usersIdentity },
  {
    method: "POST",
    path: "/users/alias/new",
    body: { user_aliases: [{ alias_name: "a", alias_label: "l" }] },
    rule: RATE_LIMITS.usersIdentity,
  },
  {
    method: "POST",
    path: "/users/alias/update",
    body: { alias_updates: [{ alias_label: "l", old_alias_name: "a", new_alias_name: "b" }] },
    rule: RATE_LIMITS.usersIdentity,
  },
];

describe("rate limits from the Limits table, on the emulator clock", () => {
  let c: Client;
  beforeAll(async () => {
    c = await startClient();
  });
  afterAll(() => c.close());
  beforeEach(() => c.control("POST", "/reset"));

  it.each(ENDPOINTS)(
    "$method $path: limit $rule.limit per window, then 429 with Retry-After and X-RateLimit headers",
    async ({ method, path, body, rule }) => {
      const first = await c.rest(method, path, body);
      expect(first.status).toBeLessThan(300);
      expect(first.headers.get("x-ratelimit-limit")).toBe(String(rule.limit));
      expect(first.headers.get("x-ratelimit-remaining")).toBe(String(rule.limit - 1));
      const state = c.emulator.state;
      while (state.rateLimiter.used(rule, state.nowMs()) < rule.limit) state.rateLimiter.take(rule, state.nowMs());
      const over = await c.rest(method, path, body);
      expect(over.status).toBe(429);
      expect(over.body.message).toEqual(expect.any(String));
      expect(over.headers.get("x-ratelimit-remaining")).toBe("0");
      const retryAfter = Number(over.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(rule.windowMs / 1000);
      expect(Number(over.headers.get("x-ratelimit-reset"))).toBe(
        Math.ceil((windowStartOf(state.nowMs(), rule.windowMs) + rule.windowMs) / 1000),
      );
      await c.control("POST", "/clock", { advanceMs: retryAfter * 1000 });
      expect((await c.rest(method, path, body)).status).toBeLessThan(300);
    },
  );

  it("/v2/subscription/status/set and /subscription/status/set share one 5,000-per-minute bucket", async () => {
    await c.rest("POST", "/subscription/status/set", ENDPOINTS[2]!.body);
    const res = await c.rest("POST", "/v2/subscription/status/set", ENDPOINTS[1]!.body);
    expect(res.headers.get("x-ratelimit-remaining")).toBe("4998");
  });

  it("/users/delete, /users/alias/new and /users/alias/update share one 20,000-per-minute bucket", async () => {
    await c.rest("POST", "/users/delete", ENDPOINTS[10]!.body);
    await c.rest("POST", "/users/alias/new", ENDPOINTS[11]!.body);
    const res = await c.rest("POST", "/users/alias/update", ENDPOINTS[12]!.body);
    expect(res.headers.get("x-ratelimit-limit")).toBe("20000");
    expect(res.headers.get("x-ratelimit-remaining")).toBe("19997");
  });

  it("the /email/* and /sms/* endpoints each have their own 250,000-per-hour bucket", async () => {
    await c.rest("POST", "/email/status", ENDPOINTS[4]!.body);
    const other = await c.rest("POST", "/email/bounce/remove", ENDPOINTS[6]!.body);
    expect(other.headers.get("x-ratelimit-limit")).toBe("250000");
    expect(other.headers.get("x-ratelimit-remaining")).toBe("249999");
  });

  it("an unauthenticated request does not consume the bucket", async () => {
    await c.call("POST", "/email/status", { body: {} });
    expect((await c.rest("POST", "/email/status", ENDPOINTS[4]!.body)).headers.get("x-ratelimit-remaining")).toBe(
      "249999",
    );
  });
});
