import type { HttpOutcome } from "./transport.js";

/**
 * The quarantine's rules, pure so they get table tests. A family (the endpoints that share one
 * rate limit and one credential: `scim`, `email.status`, ...) is quarantined when:
 *
 * - `authFailures` calls in a row were refused with 401/403: the credential is wrong or revoked,
 *   and every further call would fail the same way (and, for SCIM, cost budget); or
 * - at least `minCalls` of the last `window` calls were answered, and `failureRatePercent` or
 *   more of them failed (5xx, timeout, dropped connection, unreachable).
 *
 * 429 says nothing about health (the transport already pauses the family until the platform's
 * reset), so it is left out; any other 4xx is the platform answering normally about one request.
 */

export type QuarantineRules = {
  enabled: boolean;
  /** Consecutive 401/403 that quarantine a family (0: never for auth). */
  authFailures: number;
  /** Failure share over the window that quarantines a family (0: never for failure rate). */
  failureRatePercent: number;
  window: number;
  minCalls: number;
  /** How long a quarantine lasts before one probe call may decide. */
  coolingMs: number;
  /** How long a replica's probe claim holds before another replica may probe. */
  probeTimeoutMs: number;
  /** How long a replica trusts its cached view of the table. */
  checkMs: number;
};

export const defaultQuarantineRules: QuarantineRules = {
  enabled: true,
  authFailures: 5,
  failureRatePercent: 50,
  window: 20,
  minCalls: 10,
  coolingMs: 15 * 60_000,
  probeTimeoutMs: 120_000,
  checkMs: 1_000,
};

export type CallClass = "ok" | "auth" | "failure" | "ignored";

export function classifyCall(outcome: HttpOutcome): CallClass {
  switch (outcome.kind) {
    case "ok":
      return "ok";
    case "rate_limited":
      return "ignored";
    case "uncertain":
    case "unreachable":
      return "failure";
    case "http_error":
      if (outcome.status === 401 || outcome.status === 403) return "auth";
      if (outcome.status >= 500 || outcome.status === 408) return "failure";
      return "ok";
  }
}

/** One replica's recent calls for one family, newest last. */
export type CallWindow = { recent: Exclude<CallClass, "ignored">[]; consecutiveAuth: number };

export const emptyWindow: CallWindow = { recent: [], consecutiveAuth: 0 };

export function recordCall(window: CallWindow, call: CallClass, rules: Pick<QuarantineRules, "window">): CallWindow {
  if (call === "ignored") return window;
  const recent = [...window.recent, call].slice(-Math.max(1, rules.window));
  return { recent, consecutiveAuth: call === "auth" ? window.consecutiveAuth + 1 : 0 };
}

export type Trip = { reason: "auth" | "failure_rate"; detail: string };

export function tripOf(window: CallWindow, rules: QuarantineRules): Trip | undefined {
  if (!rules.enabled) return undefined;
  if (rules.authFailures > 0 && window.consecutiveAuth >= rules.authFailures) {
    return { reason: "auth", detail: `${window.consecutiveAuth} consecutive calls refused with 401/403` };
  }
  const calls = window.recent.length;
  if (rules.failureRatePercent > 0 && calls >= rules.minCalls) {
    // Auth refusals count as failures here too: a credential failing on and off is still failing.
    const failed = window.recent.filter((c) => c !== "ok").length;
    if (failed * 100 >= rules.failureRatePercent * calls) {
      return {
        reason: "failure_rate",
        detail: `${failed} of the last ${calls} calls failed (5xx, timeout, dropped or unreachable)`,
      };
    }
  }
  return undefined;
}

/** What a probe's answer means: only a healthy answer ends the quarantine; a 429 decides nothing. */
export function probeVerdict(call: CallClass): "resume" | "extend" | "undecided" {
  if (call === "ok") return "resume";
  if (call === "ignored") return "undecided";
  return "extend";
}

export function statusOf(outcome: HttpOutcome): number | null {
  return "status" in outcome && typeof outcome.status === "number" ? outcome.status : null;
}
