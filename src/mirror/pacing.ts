/**
 * A token bucket that keeps one replica inside a documented "N requests per window" limit.
 * With a burst of B tokens and a refill of (N - B) per window, no window of that length can see
 * more than N requests, whatever the timing (a bucket refilled at N per window would allow up to
 * N + B). The pure state transition is `takeToken`; `TokenBucket` holds the state.
 */

export type BucketRule = { limit: number; windowMs: number; burst: number };
export type BucketState = { tokens: number; atMs: number };

export function bucketRule(limit: number, windowMs: number, burst = Math.max(1, Math.floor(limit / 60))): BucketRule {
  return { limit, windowMs, burst: Math.min(burst, limit) };
}

/** Pure: refills to `nowMs`, then takes a token if there is one; else says how long to wait for it. */
export function takeToken(
  rule: BucketRule,
  state: BucketState | undefined,
  nowMs: number,
): { state: BucketState; waitMs: number } {
  const ratePerMs = Math.max(rule.limit - rule.burst, 1) / rule.windowMs;
  const start = state ?? { tokens: rule.burst, atMs: nowMs };
  const tokens = Math.min(rule.burst, start.tokens + Math.max(0, nowMs - start.atMs) * ratePerMs);
  if (tokens >= 1) return { state: { tokens: tokens - 1, atMs: nowMs }, waitMs: 0 };
  return { state: { tokens, atMs: nowMs }, waitMs: Math.ceil((1 - tokens) / ratePerMs) };
}

export class TokenBucket {
  private state: BucketState | undefined;
  constructor(readonly rule: BucketRule) {}
  /** 0 when a token was taken, else the wait before one is available (nothing taken). */
  take(nowMs: number): number {
    const { state, waitMs } = takeToken(this.rule, this.state, nowMs);
    this.state = state;
    return waitMs;
  }
}

/** The documented limits of the families the mirror sync uses (platform-api.md, Limits). */
export const MIRROR_RATE_LIMITS = {
  emailStatus: bucketRule(250_000, 3_600_000),
  subscriptionSet: bucketRule(5_000, 60_000),
  /** Per workspace, enforced in Postgres across replicas (a second of margin for clock skew). */
  preferenceCenter: { limit: 10, windowMs: 61_000 },
} as const;
