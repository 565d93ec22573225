/**
 * Pure pieces of the platform transport's retry and rate-limit behaviour, kept apart from the
 * I/O so they get table-driven tests: the retry policy, jittered backoff, and reading the
 * platform's "come back later" headers.
 */

export type RetryPolicy = {
  /** Total attempts, the first one included. 1 means "never retry". */
  maxAttempts: number;
  /** Backoff before attempt n+1 is a random delay in [0, min(maxDelayMs, baseDelayMs * 2^(n-1))]. */
  baseDelayMs: number;
  maxDelayMs: number;
  /**
   * Longest a call waits for its family's rate-limit pause to end, before it is sent or retried.
   * A longer pause is returned to the caller as `rate_limited` so a worker is never parked for
   * hours (the SCIM family's 429 can last until the next UTC day).
   */
  maxRateLimitWaitMs: number;
};

export const defaultRetryPolicy: RetryPolicy = {
  maxAttempts: 4,
  baseDelayMs: 200,
  maxDelayMs: 5_000,
  maxRateLimitWaitMs: 60_000,
};

/** One attempt; a 429 or a pause is handed back at once. For callers that decide retries themselves. */
export const noRetry: RetryPolicy = {
  maxAttempts: 1,
  baseDelayMs: 0,
  maxDelayMs: 0,
  maxRateLimitWaitMs: 0,
};

/** "Full jitter" backoff: spreads retries of many clients so they do not arrive together. */
export function backoffDelayMs(policy: RetryPolicy, failedAttempt: number, random: () => number = Math.random): number {
  const exponent = Math.max(0, failedAttempt - 1);
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(exponent, 30));
  return Math.floor(random() * ceiling);
}

/**
 * When the platform allows calls again, from a 429 (or 503) response's headers: `Retry-After`
 * in seconds or as an HTTP date, else `X-RateLimit-Reset` in epoch seconds. Unreadable or absent
 * headers give `fallbackMs` from now, so a 429 always pauses the family for a while.
 */
export function rateLimitedUntil(headers: { get(name: string): string | null }, now: Date, fallbackMs = 1_000): Date {
  const retryAfter = parseRetryAfter(headers.get("retry-after"), now);
  if (retryAfter) return retryAfter;
  const reset = parseRateLimitReset(headers.get("x-ratelimit-reset"), now);
  if (reset) return reset;
  return new Date(now.getTime() + fallbackMs);
}

export function parseRetryAfter(value: string | null | undefined, now: Date): Date | undefined {
  if (value === null || value === undefined) return undefined;
  const trimmed = value.trim();
  if (trimmed === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(trimmed)) return new Date(now.getTime() + Math.ceil(Number(trimmed) * 1000));
  // An HTTP date (RFC 9110 IMF-fixdate); Date.parse also reads the obsolete forms. Every form
  // names a month, so a bare number (Date.parse reads "-5" as a year) is not a date.
  if (!/[a-z]/i.test(trimmed)) return undefined;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return new Date(Math.max(at, now.getTime()));
}

export function parseRateLimitReset(value: string | null | undefined, now: Date): Date | undefined {
  if (value === null || value === undefined || !/^\d+(\.\d+)?$/.test(value.trim())) return undefined;
  const seconds = Number(value.trim());
  // Some APIs send "seconds until reset" in this header; an epoch value is far larger than any delay.
  const at = seconds > 1e9 ? seconds * 1000 : now.getTime() + seconds * 1000;
  return new Date(Math.max(Math.ceil(at), now.getTime()));
}

/**
 * Network failures, sorted by whether the request could have reached the platform. A POST that
 * might have been applied must never be sent again blindly, so anything not provably unsent is
 * "uncertain".
 */
export type NetworkFailure = { sent: false; reason: string } | { sent: true; reason: string };

const NOT_SENT_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_INVALID_ARG",
  "ERR_INVALID_URL",
  "CERT_HAS_EXPIRED",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

/** Classifies an error thrown by fetch (undici wraps the socket error in `cause`). */
export function classifyNetworkError(error: unknown, timedOut: boolean): NetworkFailure {
  if (timedOut) return { sent: true, reason: "timeout" };
  const code = errorCode(error);
  if (code && NOT_SENT_CODES.has(code)) return { sent: false, reason: code };
  return { sent: true, reason: code ?? "connection_lost" };
}

function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current && typeof current === "object"; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string") return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
