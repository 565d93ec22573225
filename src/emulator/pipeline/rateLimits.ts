/**
 * Fixed-window rate limits counted on the emulator clock. Windows are aligned to the epoch
 * (a minute starts at :00, an hour at :00:00, a day at UTC midnight), which is what makes the
 * SCIM family's "5,000 per day" a UTC-day budget. Only admitted requests are counted, so a
 * client that keeps calling during a 429 does not push its own reset further away.
 */

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

export type RateLimitRule = { name: string; limit: number; windowMs: number };

/** The Limits table of the document, one bucket per shared limit. */
export const RATE_LIMITS = {
  usersTrack: { name: "users.track", limit: 50_000, windowMs: MINUTE },
  subscriptionSet: { name: "subscription.status.set", limit: 5_000, windowMs: MINUTE },
  subscriptionGet: { name: "subscription.status.get", limit: 250_000, windowMs: HOUR },
  emailStatus: { name: "email.status", limit: 250_000, windowMs: HOUR },
  emailBlocklist: { name: "email.blocklist", limit: 250_000, windowMs: HOUR },
  emailBounceRemove: { name: "email.bounce.remove", limit: 250_000, windowMs: HOUR },
  emailSpamRemove: { name: "email.spam.remove", limit: 250_000, windowMs: HOUR },
  smsInvalidRemove: { name: "sms.invalid_phone_numbers.remove", limit: 250_000, windowMs: HOUR },
  smsInvalidList: { name: "sms.invalid_phone_numbers", limit: 250_000, windowMs: HOUR },
  usersIdentity: { name: "users.delete+alias", limit: 20_000, windowMs: MINUTE },
  scimDaily: { name: "scim.daily", limit: 5_000, windowMs: DAY },
  preferenceCenter: { name: "preference_center", limit: 10, windowMs: MINUTE },
  cdiList: { name: "cdi.integrations", limit: 50, windowMs: MINUTE },
  cdiJobStatus: { name: "cdi.job_sync_status", limit: 100, windowMs: MINUTE },
} satisfies Record<string, RateLimitRule>;

export type WindowCounter = { windowStart: number; used: number };

export type RateDecision = {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Epoch milliseconds at which the current window ends. */
  resetAtMs: number;
  /** Whole seconds to wait before a retry can succeed (0 when allowed). */
  retryAfterSeconds: number;
};

export function windowStartOf(nowMs: number, windowMs: number): number {
  return nowMs - (((nowMs % windowMs) + windowMs) % windowMs);
}

/** Pure: the decision for one more request and the counter after it. */
export function takeFromWindow(
  counter: WindowCounter | undefined,
  nowMs: number,
  rule: Pick<RateLimitRule, "limit" | "windowMs">,
): { decision: RateDecision; counter: WindowCounter } {
  const windowStart = windowStartOf(nowMs, rule.windowMs);
  const used = counter && counter.windowStart === windowStart ? counter.used : 0;
  const resetAtMs = windowStart + rule.windowMs;
  if (used >= rule.limit) {
    const retryAfterSeconds = Math.max(1, Math.ceil((resetAtMs - nowMs) / 1000));
    return {
      decision: { allowed: false, limit: rule.limit, remaining: 0, resetAtMs, retryAfterSeconds },
      counter: { windowStart, used },
    };
  }
  return {
    decision: { allowed: true, limit: rule.limit, remaining: rule.limit - used - 1, resetAtMs, retryAfterSeconds: 0 },
    counter: { windowStart, used: used + 1 },
  };
}

/** Used so far in the current window (0 after the window rolled over). */
function usedInWindow(counter: WindowCounter | undefined, nowMs: number, windowMs: number): number {
  return counter && counter.windowStart === windowStartOf(nowMs, windowMs) ? counter.used : 0;
}

/** The response headers for a decision: always the X-RateLimit trio, plus Retry-After on a 429. */
export function rateLimitHeaders(decision: RateDecision): Record<string, string> {
  const headers: Record<string, string> = {
    "X-RateLimit-Limit": String(decision.limit),
    "X-RateLimit-Remaining": String(decision.remaining),
    "X-RateLimit-Reset": String(Math.ceil(decision.resetAtMs / 1000)),
  };
  if (!decision.allowed) headers["Retry-After"] = String(decision.retryAfterSeconds);
  return headers;
}

/** Mutable holder of every bucket's counter; keys are `rule.name` plus an optional scope (the workspace). */
export class RateLimiter {
  private readonly counters = new Map<string, WindowCounter>();

  take(rule: RateLimitRule, nowMs: number, scope = ""): RateDecision {
    const key = scope ? `${rule.name}\u0000${scope}` : rule.name;
    const { decision, counter } = takeFromWindow(this.counters.get(key), nowMs, rule);
    this.counters.set(key, counter);
    return decision;
  }

  used(rule: RateLimitRule, nowMs: number, scope = ""): number {
    return usedInWindow(this.counters.get(scope ? `${rule.name}\u0000${scope}` : rule.name), nowMs, rule.windowMs);
  }

  clear(): void {
    this.counters.clear();
  }
}
