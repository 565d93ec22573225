import { setTimeout as delay } from "node:timers/promises";
import { systemClock, type Clock } from "../clock.js";
import { log } from "../logging/logger.js";
import {
  backoffDelayMs,
  classifyNetworkError,
  defaultRetryPolicy,
  rateLimitedUntil,
  type RetryPolicy,
} from "./retry.js";

export { defaultRetryPolicy, noRetry, type RetryPolicy } from "./retry.js";

/**
 * The one HTTP transport to the platform, shared by the SCIM client and the REST clients.
 *
 * - Every call names a *family*: the set of endpoints that share one rate limit (`scim`,
 *   `email`, `subscription`, `preferenceCenter:<workspace>`, ...). A 429 pauses the whole family
 *   until the platform's `Retry-After` / `X-RateLimit-Reset`, because the next call of that family
 *   would only be refused (and, for SCIM, would cost budget).
 * - Calls never throw for HTTP or network trouble; they return an outcome the caller can switch
 *   on. Whether a failed call may have been applied is part of the outcome (`uncertain` versus
 *   `unreachable`), because a create whose answer was lost must be resolved by lookup, not resent.
 * - Retries follow a policy the caller may replace (`noRetry`). Requests that are not idempotent
 *   (POST/PATCH unless told otherwise) are only retried when they provably were not applied:
 *   unreachable, or refused with 429.
 * - Each attempt is logged with method, route template, status and duration; never the raw path
 *   (it can hold an email) or a header.
 *
 * Node's global fetch (undici) keeps connections alive by default, so no agent is configured.
 *
 * Past ~300 lines: one class whose retry loop, family pauses and outcomes are read together; the
 * retry rules are apart in retry.ts.
 */

type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

export type HttpRequest = {
  /** The rate-limit family, e.g. "scim", "email", "subscription", "preferenceCenter:<workspace>". */
  family: string;
  method: HttpMethod;
  /** Route template with `:name` placeholders, e.g. "/scim/v2/Users/:id". Logged as is. */
  route: string;
  /** Values for the route's placeholders; URL-encoded here. */
  params?: Record<string, string>;
  /** Query parameters; arrays repeat the name. Encoded with %20 for spaces. */
  query?: Record<string, string | number | boolean | readonly string[] | undefined>;
  headers?: Record<string, string>;
  /** Sent as JSON when defined. */
  body?: unknown;
  /** Overrides the transport's default policy for this call. */
  retry?: RetryPolicy;
  /** Defaults to true for GET, PUT and DELETE. A POST that sets a state (not creates) may say true. */
  idempotent?: boolean;
  timeoutMs?: number;
  /**
   * Runs right before each attempt is sent (after any rate-limit wait), e.g. to debit a budget.
   * If it throws, nothing is sent and the error propagates to the caller.
   */
  beforeSend?: (attempt: AttemptInfo) => Promise<void> | void;
  /** Aborts waiting and the request in flight (for shutdown). */
  signal?: AbortSignal;
};

type AttemptInfo = { family: string; method: HttpMethod; route: string; attempt: number };

/** The call succeeded (2xx). `body` is parsed JSON, the text when it is not JSON, or undefined when empty. */
type HttpOk = { kind: "ok"; status: number; body: unknown; headers: Headers; attempts: number };
/** The platform answered with an error it will repeat if asked again (4xx other than 429, or 5xx of an idempotent call after retries). */
type HttpErrorOutcome = { kind: "http_error"; status: number; body: unknown; attempts: number };
/** Refused for rate: by the platform (429, `sent: true`) or locally because the family is paused (`sent: false`). */
export type RateLimitedOutcome = { kind: "rate_limited"; until: Date; sent: boolean; attempts: number };
/** The request may have been applied, but no usable answer came: timeout, dropped connection, or a 5xx to a non-idempotent call. */
type UncertainOutcome = { kind: "uncertain"; reason: string; status?: number; attempts: number };
/** The request provably never reached the platform (connection refused, DNS, TLS). */
type UnreachableOutcome = { kind: "unreachable"; reason: string; attempts: number };

export type HttpOutcome = HttpOk | HttpErrorOutcome | RateLimitedOutcome | UncertainOutcome | UnreachableOutcome;
export type HttpFailure = Exclude<HttpOutcome, HttpOk>;

export type HttpTransportOptions = {
  baseUrl: string;
  timeoutMs?: number;
  retry?: RetryPolicy;
  clock?: Clock;
  /** For tests: replaces the waits between attempts and for rate-limit pauses. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
  fetch?: typeof fetch;
  userAgent?: string;
  /** Told of every attempt's outcome (the quarantine counts failures per family). Must not throw. */
  observe?: (family: string, outcome: HttpOutcome) => void;
};

export class HttpTransport {
  private readonly baseUrl: string;
  private readonly timeoutMs: number;
  private readonly retry: RetryPolicy;
  private readonly clock: Clock;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly random: () => number;
  private readonly fetchImpl: typeof fetch;
  private readonly userAgent: string;
  private readonly observe: ((family: string, outcome: HttpOutcome) => void) | undefined;
  /** Family → epoch ms until which its calls are held back. */
  private readonly pauses = new Map<string, number>();

  constructor(options: HttpTransportOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.timeoutMs = options.timeoutMs ?? 15_000;
    this.retry = options.retry ?? defaultRetryPolicy;
    this.clock = options.clock ?? systemClock;
    this.sleep = options.sleep ?? ((ms, signal) => delay(ms, undefined, { signal }));
    this.random = options.random ?? Math.random;
    this.fetchImpl = options.fetch ?? fetch;
    this.userAgent = options.userAgent ?? "scim-connector";
    this.observe = options.observe;
  }

  /** When the family may be called again, or undefined when it is not paused. */
  pausedUntil(family: string): Date | undefined {
    const until = this.pauses.get(family);
    if (until === undefined) return undefined;
    if (until <= this.clock.now().getTime()) {
      this.pauses.delete(family);
      return undefined;
    }
    return new Date(until);
  }

  /** Holds back a family until `until` (also used when another replica learned of a 429). */
  pause(family: string, until: Date): void {
    const current = this.pauses.get(family) ?? 0;
    if (until.getTime() > current) this.pauses.set(family, until.getTime());
  }

  /**
   * Sends the request under the retry policy. Never throws for HTTP or network trouble; it
   * throws only what `beforeSend` throws, or an AbortError while waiting when `signal` aborts.
   */
  async request(req: HttpRequest): Promise<HttpOutcome> {
    const policy = req.retry ?? this.retry;
    const idempotent = req.idempotent ?? (req.method !== "POST" && req.method !== "PATCH");
    const maxAttempts = Math.max(1, Math.floor(policy.maxAttempts));
    let attempts = 0;

    for (;;) {
      const waited = await this.waitForFamily(req, policy, attempts);
      if (waited) return waited;

      attempts++;
      await req.beforeSend?.({ family: req.family, method: req.method, route: req.route, attempt: attempts });
      // The hook (the budget debit, under an advisory lock) may have waited while another call of
      // this family learned of a 429: wait out that pause too, never send into it.
      const pausedMeanwhile = await this.waitForFamily(req, policy, attempts);
      if (pausedMeanwhile) return pausedMeanwhile;
      const outcome = await this.attempt(req, attempts);
      const canRetry = attempts < maxAttempts && !req.signal?.aborted;

      if (outcome.kind === "rate_limited") {
        this.pause(req.family, outcome.until);
        // A 429 means "not applied", so even a POST may go again once the pause is over.
        if (canRetry && outcome.until.getTime() - this.clock.now().getTime() <= policy.maxRateLimitWaitMs) continue;
        return outcome;
      }
      if (outcome.kind === "unreachable" && canRetry) {
        await this.backoff(policy, attempts, req.signal);
        continue;
      }
      if (
        idempotent &&
        canRetry &&
        (outcome.kind === "uncertain" || (outcome.kind === "http_error" && outcome.status >= 500))
      ) {
        await this.backoff(policy, attempts, req.signal);
        continue;
      }
      if (!idempotent && outcome.kind === "http_error" && outcome.status >= 500) {
        // A 5xx does not say whether a create was committed before the failure.
        return { kind: "uncertain", reason: `http_${outcome.status}`, status: outcome.status, attempts };
      }
      return outcome;
    }
  }

  /** Waits out the family's pause when short enough; otherwise returns the refusal without sending. */
  private async waitForFamily(
    req: HttpRequest,
    policy: RetryPolicy,
    attempts: number,
  ): Promise<RateLimitedOutcome | undefined> {
    const until = this.pausedUntil(req.family);
    if (!until) return undefined;
    const waitMs = until.getTime() - this.clock.now().getTime();
    if (waitMs > policy.maxRateLimitWaitMs) return { kind: "rate_limited", until, sent: false, attempts };
    log.debug("platform", "waiting for rate-limit pause", { family: req.family, route: req.route, waitMs });
    await this.sleep(waitMs, req.signal);
    return undefined;
  }

  private async backoff(policy: RetryPolicy, failedAttempt: number, signal?: AbortSignal): Promise<void> {
    const ms = backoffDelayMs(policy, failedAttempt, this.random);
    if (ms > 0) await this.sleep(ms, signal);
  }

  private async attempt(req: HttpRequest, attempt: number): Promise<HttpOutcome> {
    const started = performance.now();
    const timeoutMs = req.timeoutMs ?? this.timeoutMs;
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const onCallerAbort = () => controller.abort();
    if (req.signal?.aborted) controller.abort();
    else req.signal?.addEventListener("abort", onCallerAbort, { once: true });

    let outcome: HttpOutcome;
    try {
      const response = await this.fetchImpl(this.url(req), {
        method: req.method,
        headers: this.headers(req),
        body: req.body === undefined ? undefined : JSON.stringify(req.body),
        signal: controller.signal,
      });
      // The body is read under the same timeout: a platform that stalls mid-body is a timeout too.
      const body = parseBody(await response.text());
      outcome = this.classifyResponse(response, body, attempt);
    } catch (error) {
      const failure = req.signal?.aborted ? { sent: true, reason: "aborted" } : classifyNetworkError(error, timedOut);
      outcome = failure.sent
        ? { kind: "uncertain", reason: failure.reason, attempts: attempt }
        : { kind: "unreachable", reason: failure.reason, attempts: attempt };
    } finally {
      clearTimeout(timer);
      req.signal?.removeEventListener("abort", onCallerAbort);
    }

    const fields = {
      family: req.family,
      method: req.method,
      route: req.route,
      status:
        outcome.kind === "rate_limited"
          ? outcome.sent
            ? 429
            : undefined
          : "status" in outcome
            ? outcome.status
            : undefined,
      outcome: outcome.kind,
      reason: "reason" in outcome ? outcome.reason : undefined,
      attempt,
      durationMs: Math.round(performance.now() - started),
    };
    if (outcome.kind === "ok") log.info("platform", "platform call", fields);
    else log.warn("platform", "platform call failed", fields);
    // A call the caller aborted (shutdown) says nothing about the platform.
    if (!req.signal?.aborted) this.observe?.(req.family, outcome);
    return outcome;
  }

  private classifyResponse(response: Response, body: unknown, attempt: number): HttpOutcome {
    if (response.ok) return { kind: "ok", status: response.status, body, headers: response.headers, attempts: attempt };
    if (response.status === 429) {
      return {
        kind: "rate_limited",
        until: rateLimitedUntil(response.headers, this.clock.now()),
        sent: true,
        attempts: attempt,
      };
    }
    return { kind: "http_error", status: response.status, body, attempts: attempt };
  }

  private url(req: HttpRequest): string {
    const path = req.route.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_, name: string) => {
      const value = req.params?.[name];
      if (value === undefined) throw new Error(`route ${req.route} needs a value for :${name}`);
      return encodeURIComponent(value);
    });
    return `${this.baseUrl}${path}${encodeQuery(req.query)}`;
  }

  private headers(req: HttpRequest): Record<string, string> {
    const headers: Record<string, string> = {
      accept: "application/json",
      "user-agent": this.userAgent,
      ...req.headers,
    };
    if (req.body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) {
      headers["content-type"] = "application/json";
    }
    return headers;
  }
}

export function encodeQuery(query: HttpRequest["query"]): string {
  if (!query) return "";
  const parts: string[] = [];
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    const values = Array.isArray(value) ? value : [String(value)];
    for (const v of values) parts.push(`${encodeURIComponent(name)}=${encodeURIComponent(v)}`);
  }
  return parts.length ? `?${parts.join("&")}` : "";
}

/** JSON when it parses (the platform sends JSON error bodies labelled text/html), else the text. */
export function parseBody(text: string): unknown {
  if (text === "") return undefined;
  const first = text.trimStart()[0];
  if (first === "{" || first === "[") {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return text;
}
