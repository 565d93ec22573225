/**
 * What the connector makes of the platform's record (docs/platform-record.md): each event not yet
 * handled is decided once, at no platform call, and marked with its outcome. Its own writes are
 * recognised from what it sent (the budget ledger: which action, for which user, when), never from
 * the actor text, which the platform does not publish for API writes. An account event for an email
 * no IdP user has and the connector neither created nor adopted is an account made by hand: a
 * candidate, confirmed later by one lookup (discovery.ts). Events about managed accounts, sign-ins
 * and suspensions, and edits of roles, permission sets and teams go to their handlers
 * (managedChanges.ts), injected as `ManagedHandlers`.
 */
import type { Clock } from "../clock.js";
import type { Env } from "../config/env.js";
import type { Database } from "../db/database.js";
import {
  accountFactsOf,
  listUnhandledEvents,
  markEventsHandled,
  withAnalysisLock,
  type AccountFacts,
  type OwnDebitCandidate,
  type StoredPlatformEvent,
} from "../db/platform/recordRepository.js";
import { log } from "../logging/logger.js";
import { defer, handleDeferred, type DeferredEvents, type HandledEvent } from "./batched.js";
import type { Findings, PlatformEventKind } from "./events.js";

export type { StoredPlatformEvent } from "../db/platform/recordRepository.js";

/** What is done with events about accounts the connector manages, and with activity and catalogue edits. */
export type ManagedHandlers = {
  /** An outside change (or removal) of a managed account; answers the outcome word stored on the event. */
  onManagedAccountEvent(event: StoredPlatformEvent, userId: string): Promise<string>;
  /**
   * A batch's outside changes and removals at once, in their order, when the handlers can: each
   * event's outcome by id, or the error that leaves it for the next analysis.
   */
  onManagedAccountEvents?(
    items: readonly { event: StoredPlatformEvent; userId: string }[],
  ): Promise<Map<string, string | { error: unknown }>>;
  /** A sign-in, failed login, suspension or unsuspension (managed and unmanaged accounts alike). */
  recordActivity(event: StoredPlatformEvent): Promise<void>;
  /** A batch's activity at once, when the handlers can (a report holds thousands of sign-ins). */
  recordActivities?(events: readonly StoredPlatformEvent[]): Promise<void>;
  /** A custom role, app group permission set or team edited in the dashboard. */
  recordCatalogueEdit(event: StoredPlatformEvent): Promise<void>;
};

export type AnalysisPolicy = {
  /** SECURITY_EVENTS_OWN_WRITE_WINDOW_MINUTES: how close to a write the connector sent an event must be to be that write. */
  ownWriteWindowMinutes: number;
  /** SECURITY_EVENTS_CONNECTOR_ACTOR: the actor text the platform writes for the connector, when an admin knows it. */
  connectorActor?: string | undefined;
};

/** The policy as configured (the import's callers build the analysis's deps with it). */
export function analysisPolicyFromEnv(
  env: Pick<Env, "SECURITY_EVENTS_OWN_WRITE_WINDOW_MINUTES" | "SECURITY_EVENTS_CONNECTOR_ACTOR">,
): AnalysisPolicy {
  return {
    ownWriteWindowMinutes: env.SECURITY_EVENTS_OWN_WRITE_WINDOW_MINUTES,
    connectorActor: env.SECURITY_EVENTS_CONNECTOR_ACTOR,
  };
}

export type AnalysisDeps = {
  db: Database;
  clock: Clock;
  handlers: ManagedHandlers;
  policy: AnalysisPolicy;
  /** Told when the analysis recorded a candidate (wakes this process's discovery lane). */
  onCandidate?: () => void;
  /** Events read per statement (default 500). */
  batchSize?: number;
};

const ACCOUNT_KINDS: ReadonlySet<PlatformEventKind> = new Set([
  "account-added",
  "account-updated",
  "permissions-changed",
  "account-removed",
]);
const ACTIVITY_KINDS: ReadonlySet<PlatformEventKind> = new Set([
  "signed-in",
  "failed-login",
  "suspended",
  "unsuspended",
]);
const CATALOGUE_KINDS: ReadonlySet<PlatformEventKind> = new Set([
  "role-changed",
  "permission-set-changed",
  "team-changed",
]);

/**
 * The ledger actions (src/reconcile: `create`, `update`, `strip`, `deprovision`) that would be the
 * connector's own write of an event of this kind. A create sets the account's permissions too, so
 * it also accounts for a permission or update event the platform may record beside Added Account.
 */
export function ownWriteActions(kind: PlatformEventKind): string[] {
  switch (kind) {
    case "account-added":
      return ["create"];
    case "account-updated":
    case "permissions-changed":
      return ["update", "strip", "create"];
    case "account-removed":
      return ["deprovision"];
    default:
      return [];
  }
}

/**
 * The write of the connector's that an account event is, if any: one write explains one event, so
 * that a change made in the dashboard just after the connector's own write of the same account is
 * not taken for it. A create may explain two: its Added Account and a permission or update event
 * the platform may record beside it (it does not say whether it does), by the same actor as that
 * Added Account, whatever text the platform writes for it. Nearest in time first (pure).
 */
export function pickOwnDebit(
  event: Pick<StoredPlatformEvent, "kind" | "actor">,
  candidates: readonly OwnDebitCandidate[],
  explainedNow: ReadonlyMap<string, readonly { kind: string; actor: string }[]>,
): string | undefined {
  const besidePermissions = event.kind === "permissions-changed" || event.kind === "account-updated";
  for (const debit of candidates) {
    const explained = [...debit.explains, ...(explainedNow.get(debit.id) ?? [])];
    if (debit.action === "create" && besidePermissions) {
      // Only beside the Added Account it explained: a create whose Added Account is not in the
      // record (out of the report's 10,000 rows) vouches for no permission change by anyone.
      const [added] = explained;
      if (explained.length === 1 && added!.kind === "account-added" && added!.actor === event.actor) return debit.id;
      continue;
    }
    if (explained.length === 0) return debit.id;
  }
  return undefined;
}

export type Decision =
  | { route: "own-write" }
  | { route: "unmanaged"; removed: boolean }
  | { route: "managed"; userId: string; removed: boolean }
  | { route: "activity" }
  | { route: "catalogue" }
  | { route: "ignored" };

/** What one event means, from what the connector knows of its account (pure). */
export function decideEvent(
  event: StoredPlatformEvent,
  facts: AccountFacts | undefined,
  policy: AnalysisPolicy,
): Decision {
  if (ACTIVITY_KINDS.has(event.kind)) return { route: "activity" };
  if (CATALOGUE_KINDS.has(event.kind)) return { route: "catalogue" };
  if (!ACCOUNT_KINDS.has(event.kind) || !event.account) return { route: "ignored" };
  if (facts?.ownDebit || (policy.connectorActor !== undefined && event.actor.trim() === policy.connectorActor))
    return { route: "own-write" };
  const removed = event.kind === "account-removed";
  const userId = facts?.idpUserId ?? facts?.accountUserId;
  return userId ? { route: "managed", userId, removed } : { route: "unmanaged", removed };
}

const emptyFindings = (): Findings => ({
  ownWrites: 0,
  candidates: 0,
  outsideChanges: 0,
  removedByHand: 0,
  activity: 0,
  catalogueEdits: 0,
  ignored: 0,
});

/**
 * Decides every event not yet handled, oldest first, in batches, and marks each with its outcome.
 * One analysis at a time across replicas (a second waits, then finds what is left); counts what
 * this call handled. A handler that fails leaves its event unhandled for the next analysis.
 */
export async function analysePending(deps: AnalysisDeps): Promise<Findings> {
  return withAnalysisLock(deps.db, async () => {
    const findings = emptyFindings();
    // The events each own write explained in this call (earlier calls' are stored on the events).
    const explainedNow = new Map<string, { kind: string; actor: string }[]>();
    let cursor: { at: Date; id: string } | null = null;
    for (;;) {
      const events = await listUnhandledEvents(deps.db, cursor, deps.batchSize ?? 500);
      if (!events.length) break;
      cursor = { at: events.at(-1)!.at, id: events.at(-1)!.id };
      const facts = await accountFactsOf(
        deps.db,
        events.map((e) => ({ id: e.id, at: e.at, account: e.account, ownActions: ownWriteActions(e.kind) })),
        deps.policy.ownWriteWindowMinutes,
      );
      const handled: HandledEvent[] = [];
      // Candidates, outside changes and activity go in one statement per kind per batch (deferred).
      const deferred: DeferredEvents = { unmanaged: [], managed: [], activity: [] };
      for (const event of events) {
        const known = facts.get(event.id);
        const ownDebitId = known ? pickOwnDebit(event, known.ownDebits, explainedNow) : undefined;
        const decision = decideEvent(event, known && { ...known, ownDebit: ownDebitId !== undefined }, deps.policy);
        if (decision.route === "unmanaged") {
          deferred.unmanaged.push({ event, removed: decision.removed });
          continue;
        }
        if (defer(deps.handlers, deferred, event, decision)) continue;
        try {
          const outcome = await handle(deps, event, decision, findings);
          if (decision.route === "own-write" && ownDebitId) {
            explainedNow.set(ownDebitId, [...(explainedNow.get(ownDebitId) ?? []), event]);
            handled.push({ id: event.id, outcome, ownDebitId });
          } else handled.push({ id: event.id, outcome });
        } catch (error) {
          log.warn("platform-record", "event left for the next analysis", {
            eventId: event.id,
            kind: event.kind,
            error,
          });
        }
      }
      await handleDeferred(deps, deferred, handled, findings);
      await markEventsHandled(deps.db, handled, deps.clock.now());
    }
    if (findings.candidates) deps.onCandidate?.();
    return findings;
  });
}

/** Acts on one decision, counts it, and answers the outcome word stored on the event. */
async function handle(
  deps: AnalysisDeps,
  event: StoredPlatformEvent,
  decision: Exclude<Decision, { route: "unmanaged" }>,
  findings: Findings,
) {
  switch (decision.route) {
    case "own-write":
      findings.ownWrites++;
      return "own-write";
    case "managed": {
      const outcome = await deps.handlers.onManagedAccountEvent(event, decision.userId);
      if (decision.removed) findings.removedByHand++;
      else findings.outsideChanges++;
      return outcome || (decision.removed ? "removed-by-hand" : "outside-change");
    }
    case "activity":
      await deps.handlers.recordActivity(event);
      findings.activity++;
      return "activity";
    case "catalogue":
      await deps.handlers.recordCatalogueEdit(event);
      findings.catalogueEdits++;
      return "catalogue-edit";
    case "ignored":
      findings.ignored++;
      return "ignored";
  }
}
