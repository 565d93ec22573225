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
import { getAccount } from "../db/platformAccountRepository.js";
import { markPlatformCheck, markUsersDirty } from "../db/reconcileQueueRepository.js";
import { removeAccount } from "../db/platformAccountRepository.js";
import { writeLogEntry } from "../db/reconcileLogRepository.js";
import { saveOutsideChange } from "../db/outsideChangeRepository.js";
import { recordActivityFact, recordSignInFacts } from "../db/platformActivityRepository.js";
import { recordCatalogueEdit as storeCatalogueEdit, type CatalogueEditKind } from "../db/catalogueEditRepository.js";
import type { DesiredStateSource } from "../reconcile/ports.js";
import { platformChangeWords, type PlatformTrigger } from "../vocabulary/reconcile.js";
import type { StoredPlatformEvent } from "../db/platformRecordRepository.js";
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

export async function onManagedAccountEvent(
  deps: ManagedChangesDeps,
  event: StoredPlatformEvent,
  userId: string,
): Promise<ManagedEventOutcome> {
  const account = await getAccount(deps.db, userId);
  if (!account?.platformId) return "no-account";
  if (account.appliedAt && account.appliedAt.getTime() > event.at.getTime()) return "superseded";
  const trigger: PlatformTrigger = {
    kind: "platform",
    event: event.kind,
    name: event.event,
    actor: event.actor,
    at: event.at.toISOString(),
  };
  switch (event.kind) {
    case "permissions-changed":
    case "account-updated":
      await markPlatformCheck(deps.db, userId, trigger);
      return "check-queued";
    case "account-removed":
      return removedByHand(deps, event, userId, account.userName, trigger);
    default:
      return "ignored";
  }
}

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
