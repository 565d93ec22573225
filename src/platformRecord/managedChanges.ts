/**
 * What the platform's record means for accounts the connector manages (docs/platform-record.md,
 * "What each event does"). The dispatcher (./findings.ts) has already set aside the connector's own
 * writes and the accounts no IdP user has; what reaches here was done on the platform by someone
 * else, to an account the connector created or adopted. Finding it costs no platform call:
 *
 * - permissions changed, account updated: the account is read once, by the reconciler
 *   (src/reconcile/platformCheck.ts), which puts back what the mapping grants (revert) or keeps and
 *   shows what it found (report);
 * - account removed: forgotten and created again by the planner (revert; one POST), or shown (report);
 * - signed in, failed login, suspended, unsuspended: stored per account, shown;
 * - custom roles, permission sets and teams edited: stored, named on the mapping page.
 */
import { randomUUID } from "node:crypto";
import type { Clock } from "../clock.js";
import type { Database } from "../db/database.js";
import { getAccounts, removeAccount } from "../db/platform/accountRepository.js";
import { markPlatformChecks, markUsersDirty } from "../db/reconcile/queueRepository.js";
import { writeLogEntry } from "../db/reconcile/logRepository.js";
import { saveOutsideChange } from "../db/platform/outsideChangeRepository.js";
import { recordActivityFact, recordSignInFacts } from "../db/platform/activityRepository.js";
import {
  recordCatalogueEdit as storeCatalogueEdit,
  type CatalogueEditKind,
} from "../db/platform/catalogueEditRepository.js";
import type { DesiredStateSource } from "../reconcile/ports.js";
import { platformChangeWords, type PlatformTrigger } from "../vocabulary/reconcile.js";
import type { StoredPlatformEvent } from "../db/platform/recordRepository.js";
import type { PlatformEvent } from "./events.js";

export type ManagedChangesDeps = {
  db: Database;
  clock: Clock;
  /** PLATFORM_OUTSIDE_CHANGES. */
  outsideChanges: "revert" | "report";
  /** What the mapping grants the user now (an account removed by hand is created again only if it still does). */
  source: Pick<DesiredStateSource, "load">;
};

/**
 * What an event's row is marked with once handled (platform_events.outcome):
 * - `check-queued`: the reconciler reads the account (one GET) and reverts or keeps the change;
 * - `recreate-queued`: the account was removed by hand and is still assigned: created again (one POST);
 * - `forgotten`: removed by hand and no longer assigned: the connector's record of it goes;
 * - `reported`: removed by hand, shown only (report);
 * - `superseded`: the connector wrote the account after the event (a PUT replaces the whole
 *   account; a create made it again): nothing left to do;
 * - `no-account`: the connector holds no platform account for this user.
 */
export type ManagedEventOutcome =
  "check-queued" | "recreate-queued" | "forgotten" | "reported" | "superseded" | "no-account" | "ignored";

/** An event of a managed account's, with the user whose account it is. */
export type ManagedAccountEvent = { event: StoredPlatformEvent; userId: string };

/** Each event's outcome by event id, or the error that left it for the next analysis. */
export type ManagedEventResults = Map<string, ManagedEventOutcome | { error: unknown }>;

export async function onManagedAccountEvent(
  deps: ManagedChangesDeps,
  event: StoredPlatformEvent,
  userId: string,
): Promise<ManagedEventOutcome> {
  const result = (await onManagedAccountEvents(deps, [{ event, userId }])).get(event.id)!;
  if (typeof result === "object") throw result.error;
  return result;
}

/**
 * A batch's events of managed accounts, in their order, as one by one but in few statements: the
 * accounts read at once, the checks marked at once. A removal (rare) is handled on its own, after
 * the checks before it were marked, and the events after it see the account gone (revert).
 */
export async function onManagedAccountEvents(
  deps: ManagedChangesDeps,
  items: readonly ManagedAccountEvent[],
): Promise<ManagedEventResults> {
  const results: ManagedEventResults = new Map();
  const accounts = await getAccounts(deps.db, [...new Set(items.map((i) => i.userId))]);
  let checks: { eventId: string; userId: string; trigger: PlatformTrigger }[] = [];
  const markChecks = async () => {
    if (!checks.length) return;
    const marked = checks;
    checks = [];
    try {
      await deps.db.transaction((tx) => markPlatformChecks(tx, marked));
      for (const c of marked) results.set(c.eventId, "check-queued");
    } catch (error) {
      for (const c of marked) results.set(c.eventId, { error });
    }
  };
  for (const { event, userId } of items) {
    const account = accounts.get(userId);
    if (!account?.platformId) results.set(event.id, "no-account");
    else if (account.appliedAt && account.appliedAt.getTime() > event.at.getTime()) results.set(event.id, "superseded");
    else if (event.kind === "permissions-changed" || event.kind === "account-updated")
      checks.push({ eventId: event.id, userId, trigger: triggerOf(event) });
    else if (event.kind === "account-removed") {
      await markChecks();
      try {
        const outcome = await removedByHand(deps, event, userId, account.userName, triggerOf(event));
        results.set(event.id, outcome);
        if (outcome !== "reported") accounts.delete(userId);
      } catch (error) {
        results.set(event.id, { error });
      }
    } else results.set(event.id, "ignored");
  }
  await markChecks();
  return results;
}

const triggerOf = (event: StoredPlatformEvent): PlatformTrigger => ({
  kind: "platform",
  event: event.kind,
  name: event.event,
  actor: event.actor,
  at: event.at.toISOString(),
});

/**
 * The event told us the account is gone: no call is spent finding it. revert: the connector's
 * record of it goes and the user is marked, so the planner creates it again when the mapping still
 * grants it. report: kept as it is, shown on the user page.
 */
async function removedByHand(
  deps: ManagedChangesDeps,
  event: StoredPlatformEvent,
  userId: string,
  userName: string,
  trigger: PlatformTrigger,
): Promise<ManagedEventOutcome> {
  const now = deps.clock.now();
  const said = platformChangeWords(trigger);
  const entry = {
    at: now,
    reconcileId: randomUUID(),
    userId,
    userName,
    action: "drift" as const,
    trigger,
    changes: [{ kind: "account" as const, old: "present" as const, new: "absent" as const }],
  };
  if (deps.outsideChanges === "report") {
    await deps.db.transaction(async (tx) => {
      await saveOutsideChange(tx, {
        userId,
        userName,
        change: "removed",
        event: event.event,
        actor: event.actor,
        at: event.at,
        access: null,
        recordedAt: now,
      });
      await writeLogEntry(tx, {
        ...entry,
        outcome: "reported",
        note: `${said}; kept so (PLATFORM_OUTSIDE_CHANGES=report)`,
      });
    });
    return "reported";
  }
  const { desired } = await deps.source.load(userId);
  await deps.db.transaction(async (tx) => {
    await removeAccount(tx, userId);
    if (desired) await markUsersDirty(tx, [userId], trigger);
    await writeLogEntry(tx, {
      ...entry,
      outcome: "enforced",
      note: desired ? `${said}; created again` : `${said}; no longer assigned: forgotten`,
    });
  });
  return desired ? "recreate-queued" : "forgotten";
}

/** Signed in, failed login, suspended, unsuspended: the account's latest of each, whoever holds it. */
export async function recordActivity(
  deps: Pick<ManagedChangesDeps, "db">,
  event: StoredPlatformEvent,
): Promise<"recorded" | "ignored"> {
  if (!event.account) return "ignored";
  switch (event.kind) {
    case "signed-in":
    case "failed-login":
      await recordActivityFact(deps.db, event.account, { fact: event.kind, at: event.at });
      return "recorded";
    case "suspended":
    case "unsuspended":
      await recordActivityFact(deps.db, event.account, { fact: event.kind, at: event.at, actor: event.actor });
      return "recorded";
    default:
      return "ignored";
  }
}

/**
 * A batch's activity: its sign-ins and failed logins in one statement, its suspensions (few, and
 * their order matters) one by one.
 */
export async function recordActivities(
  deps: Pick<ManagedChangesDeps, "db">,
  events: readonly StoredPlatformEvent[],
): Promise<void> {
  const signIns = events.flatMap((e) =>
    e.account && (e.kind === "signed-in" || e.kind === "failed-login")
      ? [{ userName: e.account, fact: e.kind, at: e.at }]
      : [],
  );
  await recordSignInFacts(deps.db, signIns);
  for (const event of events)
    if (event.kind === "suspended" || event.kind === "unsuspended") await recordActivity(deps, event);
}

const CATALOGUE_KINDS: Partial<Record<PlatformEvent["kind"], CatalogueEditKind>> = {
  "role-changed": "role",
  "permission-set-changed": "permission-set",
  "team-changed": "team",
};

/** A custom role, permission set or team edited in the dashboard (`details`: its name). */
export async function recordCatalogueEdit(
  deps: Pick<ManagedChangesDeps, "db">,
  event: StoredPlatformEvent,
): Promise<"recorded" | "ignored"> {
  const kind = CATALOGUE_KINDS[event.kind];
  if (!kind) return "ignored";
  await storeCatalogueEdit(deps.db, event.id, {
    kind,
    name: event.details?.trim() || null,
    event: event.event,
    at: event.at,
    actor: event.actor,
  });
  return "recorded";
}
