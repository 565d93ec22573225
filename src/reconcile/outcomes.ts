import type { HttpFailure } from "../platform/transport.js";

/** What a reconcile tells the worker (the controller-runtime shape). */
export type ReconcileResult =
  | { kind: "done" }
  /**
   * done for now; the same queue row comes back at `at`, filed as `action` (default
   * `await-delete`: a stripped account's delete after the grace; `held-legacy`: a grant the
   * platform refuses for its legacy strings, released by the next mapping change)
   */
  | { kind: "requeue"; at: Date; action?: "await-delete" | "held-legacy" }
  /** a failure worth retrying with backoff */
  | { kind: "retry"; error: string }
  /** the platform asked us to wait */
  | { kind: "rate_limited"; until: Date }
  /** no budget left for this kind of call until then */
  | { kind: "budget"; resetsAt: Date }
  /** retrying will not help: park it for an admin */
  | { kind: "terminal"; error: string };

/** How a failed platform call ends the reconcile. 401/403 are retried: they are about the connector's credentials, not the user. */
export function resultOfFailure(outcome: HttpFailure): ReconcileResult {
  switch (outcome.kind) {
    case "rate_limited":
      return { kind: "rate_limited", until: outcome.until };
    case "uncertain":
    case "unreachable":
      return { kind: "retry", error: `${outcome.kind}: ${outcome.reason}` };
    case "http_error":
      if (outcome.status >= 500 || outcome.status === 401 || outcome.status === 403 || outcome.status === 408) {
        return { kind: "retry", error: `platform answered ${outcome.status}` };
      }
      return { kind: "terminal", error: `platform answered ${outcome.status}: ${errorDetail(outcome.body)}` };
  }
}

/** The platform's own words from an error body, short. */
export function errorDetail(body: unknown): string {
  if (body && typeof body === "object") {
    const b = body as Record<string, unknown>;
    const text = b.detail ?? b.message ?? b.error;
    if (typeof text === "string") return text.slice(0, 300);
  }
  return typeof body === "string" ? body.slice(0, 300) : "";
}

/** Whether a failed call provably did not change the platform (so a 'creating' mark can be undone). */
export function provablyNotApplied(outcome: HttpFailure): boolean {
  if (outcome.kind === "unreachable") return true;
  if (outcome.kind === "rate_limited") return true;
  return outcome.kind === "http_error" && outcome.status < 500;
}

/** Growing, jittered delay before retrying a user: 5 s, 10 s, 20 s, … up to an hour. */
export function retryDelayMs(attempts: number, random: () => number = Math.random): number {
  const base = Math.min(3_600_000, 5_000 * 2 ** Math.min(attempts, 20));
  return Math.round(base * (0.8 + 0.4 * random()));
}
