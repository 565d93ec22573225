/**
 * The events of a batch of the analysis (./findings.ts) handled together once the batch is walked,
 * one statement per kind instead of one per event (a report holds hundreds of candidates and
 * outside changes, and thousands of sign-ins): counted and marked as `handle` in findings.ts does
 * them one by one. The kinds touch different rows, so their order between them does not matter;
 * within a kind the batch's order is kept.
 */
import { recordUnmanagedEvents } from "../db/platform/unmanagedAccountRepository.js";
import { log } from "../logging/logger.js";
import type { Findings } from "./events.js";
import type { AnalysisDeps, Decision, ManagedHandlers, StoredPlatformEvent } from "./findings.js";

export type HandledEvent = { id: string; outcome: string; ownDebitId?: string };

/** A batch's events handled together after the batch's walk, one statement per kind. */
export type DeferredEvents = {
  unmanaged: { event: StoredPlatformEvent; removed: boolean }[];
  managed: { event: StoredPlatformEvent; userId: string; removed: boolean }[];
  activity: StoredPlatformEvent[];
};

/** Sets the event aside for handleDeferred when its kind is handled a batch at a time. */
export function defer(
  handlers: ManagedHandlers,
  deferred: DeferredEvents,
  event: StoredPlatformEvent,
  decision: Decision,
) {
  if (decision.route === "managed" && handlers.onManagedAccountEvents)
    deferred.managed.push({ event, userId: decision.userId, removed: decision.removed });
  else if (decision.route === "activity" && handlers.recordActivities) deferred.activity.push(event);
  else return false;
  return true;
}

/**
 * The deferred events, each kind at once and in the batch's order, counted and marked as `handle`
 * does one by one (the kinds touch different rows: their order between them does not matter). What
 * fails is left for the next analysis.
 */
export async function handleDeferred(
  deps: AnalysisDeps,
  deferred: DeferredEvents,
  handled: HandledEvent[],
  findings: Findings,
) {
  if (deferred.unmanaged.length) await recordCandidates(deps, deferred.unmanaged, handled, findings);
  if (deferred.managed.length) await handleManaged(deps, deferred.managed, handled, findings);
  if (deferred.activity.length) await recordActivity(deps, deferred.activity, handled, findings);
}

/** Accounts made by hand: one upsert per batch (unmanagedAccountRepository.ts). */
async function recordCandidates(
  deps: AnalysisDeps,
  unmanaged: DeferredEvents["unmanaged"],
  handled: HandledEvent[],
  findings: Findings,
) {
  try {
    await deps.db.transaction((tx) =>
      recordUnmanagedEvents(
        tx,
        unmanaged.map(({ event, removed }) => ({
          userName: event.account!,
          at: event.at,
          actor: event.actor,
          kind: event.kind,
          removed,
        })),
      ),
    );
  } catch (error) {
    log.warn("platform-record", "candidates left for the next analysis", { events: unmanaged.length, error });
    return;
  }
  for (const { event, removed } of unmanaged) {
    if (removed) findings.removedByHand++;
    else findings.candidates++;
    handled.push({ id: event.id, outcome: removed ? "unmanaged-removed" : "unmanaged" });
  }
}

/** Outside changes and removals of managed accounts (managedChanges.ts), each with its own outcome. */
async function handleManaged(
  deps: AnalysisDeps,
  managed: DeferredEvents["managed"],
  handled: HandledEvent[],
  findings: Findings,
) {
  let results: Map<string, string | { error: unknown }>;
  try {
    results = await deps.handlers.onManagedAccountEvents!(managed);
  } catch (error) {
    results = new Map(managed.map(({ event }) => [event.id, { error }]));
  }
  for (const { event, removed } of managed) {
    const result = results.get(event.id);
    if (typeof result === "object" || result === undefined) {
      log.warn("platform-record", "event left for the next analysis", {
        eventId: event.id,
        kind: event.kind,
        error: result?.error,
      });
      continue;
    }
    if (removed) findings.removedByHand++;
    else findings.outsideChanges++;
    handled.push({ id: event.id, outcome: result || (removed ? "removed-by-hand" : "outside-change") });
  }
}

/** Sign-ins, failed logins and suspensions (recordActivities). */
async function recordActivity(
  deps: AnalysisDeps,
  activity: StoredPlatformEvent[],
  handled: HandledEvent[],
  findings: Findings,
) {
  try {
    await deps.handlers.recordActivities!(activity);
  } catch (error) {
    log.warn("platform-record", "activity left for the next analysis", { events: activity.length, error });
    return;
  }
  findings.activity += activity.length;
  handled.push(...activity.map((e) => ({ id: e.id, outcome: "activity" })));
}
