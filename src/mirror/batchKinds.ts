import type { PushLogEntry } from "../db/mirror/syncRepository.js";
import type { HttpOutcome, RetryPolicy } from "../platform/transport.js";
import type { PlatformRestClient } from "../platform/rest.js";
import {
  MAX_ENTRIES_PER_SUBSCRIPTION_REQUEST,
  emailStatusBody,
  subscriptionEntry,
  toUnits,
  type EmailPayload,
  type PendingChange,
  type SubscriptionPayload,
  type Unit,
} from "./batching.js";
import type { PushResult, SendVerdict } from "./pushing.js";

/** The two batched kinds: which endpoint, how many arrays per request, how a request is sent. */

export type BatchKind = "email" | "subscription_group";
export type BatchSpec = {
  kind: BatchKind;
  endpoint: string;
  unitsPerRequest: number;
  requestsPerClaim: number;
  send(units: Unit<unknown>[], apiKey: string, signal: AbortSignal): Promise<HttpOutcome>;
};

export function batchSpecs(
  rest: PlatformRestClient,
  retry: RetryPolicy,
  options: {
    emailRequestsPerClaim?: number;
    subscriptionRequestsPerClaim?: number;
    entriesPerSubscriptionRequest?: number;
  },
): BatchSpec[] {
  return [
    {
      kind: "email",
      endpoint: "POST /email/status",
      unitsPerRequest: 1,
      requestsPerClaim: options.emailRequestsPerClaim ?? 20,
      send: (units, apiKey, signal) => {
        const { emails, state } = emailStatusBody(units[0] as Unit<EmailPayload>);
        return rest.setEmailStatus(emails, state, { apiKey, retry, signal });
      },
    },
    {
      kind: "subscription_group",
      endpoint: "POST /v2/subscription/status/set",
      unitsPerRequest: options.entriesPerSubscriptionRequest ?? MAX_ENTRIES_PER_SUBSCRIPTION_REQUEST,
      requestsPerClaim: options.subscriptionRequestsPerClaim ?? 2,
      send: (units, apiKey, signal) =>
        rest.setSubscriptionStatuses((units as Unit<SubscriptionPayload>[]).map(subscriptionEntry), {
          apiKey,
          retry,
          signal,
        }),
    },
  ];
}

/** Re-plans a set of changes (a bisected half) into request batches of the kind. */
export function requestBatches<P>(spec: BatchSpec, changes: PendingChange<P>[]): PendingChange<P>[][] {
  const units = toUnits(changes);
  const out: PendingChange<P>[][] = [];
  for (let i = 0; i < units.length; i += spec.unitsPerRequest)
    out.push(units.slice(i, i + spec.unitsPerRequest).flatMap((u) => u.changes));
  return out;
}

export function sent(verdict: SendVerdict): boolean {
  return !(verdict.kind === "retry" && verdict.cause === "paced");
}

export function pushLogEntries(spec: BatchSpec, result: PushResult): PushLogEntry[] {
  return result.requests
    .filter((r) => sent(r.verdict))
    .map(({ changes, verdict }): PushLogEntry => {
      const entry: PushLogEntry = { kind: spec.kind, endpoint: spec.endpoint, changes, outcome: "ok" };
      if (verdict.kind === "ok") return { ...entry, status: verdict.status };
      if (verdict.kind === "rejected")
        return { ...entry, outcome: "rejected", status: verdict.status, detail: verdict.message };
      return {
        ...entry,
        outcome: verdict.cause === "rate_limited" ? "rate_limited" : "retry",
        status: verdict.status,
        detail: verdict.reason,
      };
    });
}
