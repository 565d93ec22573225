import type { Settlement } from "../db/mirror/syncRepository.js";
import type { HttpOutcome } from "../platform/transport.js";
import { platformMessage } from "../platform/rest.js";
import { halves, type PendingChange } from "./batching.js";

/**
 * What a platform answer means for the changes in the request, and the bisection that finds the
 * rows a 4xx is about: the platform rejects a whole request for one bad address, so the request is
 * halved until each rejected half is a single change, which is parked with the platform's message.
 */

export type SendVerdict =
  | { kind: "ok"; status: number }
  /** The platform refused the data (4xx): bisect, then park the single bad change. */
  | { kind: "rejected"; status: number; message: string }
  /** Nothing wrong with the data: release the changes and try again later. */
  | {
      kind: "retry";
      reason: string;
      status?: number;
      until?: Date;
      cause: "rate_limited" | "auth" | "transient" | "paced";
    };

/** Pure: classifies a transport outcome. 401/403 are our credentials, 408 is the network: neither is the data. */
export function verdictOf(outcome: HttpOutcome): SendVerdict {
  switch (outcome.kind) {
    case "ok":
      return { kind: "ok", status: outcome.status };
    case "http_error":
      if (outcome.status === 401 || outcome.status === 403) {
        return {
          kind: "retry",
          cause: "auth",
          status: outcome.status,
          reason: `HTTP ${outcome.status}: ${platformMessage(outcome.body, outcome.status)}`,
        };
      }
      if (outcome.status >= 400 && outcome.status < 500 && outcome.status !== 408) {
        return { kind: "rejected", status: outcome.status, message: platformMessage(outcome.body, outcome.status) };
      }
      return { kind: "retry", cause: "transient", status: outcome.status, reason: `HTTP ${outcome.status}` };
    case "rate_limited":
      // Not sent means the transport held it back (the family is paused): not a request.
      return outcome.sent
        ? { kind: "retry", cause: "rate_limited", until: outcome.until, reason: "rate limited" }
        : { kind: "retry", cause: "paced", until: outcome.until, reason: "family paused after a 429" };
    case "uncertain":
    case "unreachable":
      return {
        kind: "retry",
        cause: "transient",
        status: "status" in outcome ? outcome.status : undefined,
        reason: outcome.reason,
      };
  }
}

type SentRequest = { changes: number; verdict: SendVerdict };

export type PushResult = {
  settlements: Settlement[];
  requests: SentRequest[];
  /** The retry verdict that decides the family's hold: the first platform failure, else the first local one. */
  retry?: Extract<SendVerdict, { kind: "retry" }>;
};

/**
 * Sends `batch` as one request; on a 4xx, re-plans each half (`plan` turns changes into request
 * batches) and recurses. Good rows land, each bad row ends parked with the platform's message.
 */
export async function pushWithBisection<P>(
  batch: PendingChange<P>[],
  plan: (changes: PendingChange<P>[]) => PendingChange<P>[][],
  send: (changes: PendingChange<P>[]) => Promise<SendVerdict>,
  result: PushResult,
): Promise<void> {
  const verdict = await send(batch);
  result.requests.push({ changes: batch.length, verdict });
  if (verdict.kind === "ok") {
    for (const c of batch) result.settlements.push({ key: c.key, version: c.version, outcome: "ack" });
  } else if (verdict.kind === "retry") {
    // A platform failure outranks a local "not sent" in deciding how long the family is held.
    if (!result.retry || result.retry.cause === "paced") result.retry = verdict;
    for (const c of batch)
      result.settlements.push({ key: c.key, version: c.version, outcome: "release", reason: verdict.reason });
  } else if (batch.length === 1) {
    const reason = `platform refused (HTTP ${verdict.status}): ${verdict.message}`;
    result.settlements.push({ key: batch[0].key, version: batch[0].version, outcome: "park", reason });
  } else {
    for (const half of halves(batch)) {
      for (const request of plan(half)) await pushWithBisection(request, plan, send, result);
    }
  }
}

/** Runs `fn` over items with at most `limit` in flight. */
export async function forEachLimited<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]);
  });
  await Promise.all(lanes);
}
