import { firstDriftedUserNames, type NotificationInput } from "../db/notify/notificationRepository.js";
import type { Queryable } from "../db/database.js";
import { EVENTS, notify } from "./events.js";

/**
 * The platform side's events: a family quarantined and resumed (quarantine.started, .ended), a
 * verifying resync's drift (drift.found), a failed full resync (resync.failed), mirror changes
 * the platform refused (mirror.parked), and an account made by hand, confirmed
 * (platform.unmanaged_account).
 */

export function quarantineStarted(row: {
  family: string;
  reason: string;
  detail: string;
  since: Date;
  resumeAt: Date;
  lastStatus: number | null;
}): NotificationInput {
  return {
    key: `quarantine:${row.family}`,
    event: EVENTS.quarantineStarted,
    occurredAt: row.since,
    summary: `Platform family ${row.family} quarantined: ${row.detail}`,
    details: {
      family: row.family,
      reason: row.reason,
      detail: row.detail,
      lastStatus: row.lastStatus,
      probeAfter: row.resumeAt.toISOString(),
    },
    linkPath: "/admin",
  };
}

export function quarantineEnded(now: Date, row: { family: string; since: Date }, how: string): NotificationInput {
  return {
    key: `quarantine:${row.family}`,
    event: EVENTS.quarantineEnded,
    occurredAt: now,
    summary: `Platform family ${row.family} resumed (${how})`,
    details: {
      family: row.family,
      how,
      quarantinedForSeconds: Math.round((now.getTime() - row.since.getTime()) / 1000),
    },
    linkPath: "/admin",
  };
}
/** Call in the transaction that closes a verifying run. */
export async function runVerified(
  q: Queryable,
  now: Date,
  run: { id: string; drifted: number; verified: number; startedAt: Date },
): Promise<void> {
  if (run.drifted > 0)
    await notify(q, driftFound(now, { ...run, firstUsers: await firstDriftedUserNames(q, run.startedAt) }));
}

function driftFound(
  now: Date,
  run: { id: string; drifted: number; verified: number; firstUsers: string[] },
): NotificationInput {
  return {
    key: `drift:${run.id}`,
    event: EVENTS.driftFound,
    occurredAt: now,
    summary: `A verifying resync found ${run.drifted} of ${run.verified} platform accounts drifted`,
    details: { runId: run.id, drifted: run.drifted, verified: run.verified, firstUsers: run.firstUsers },
    linkPath: "/admin/runs",
  };
}

export function resyncFailed(now: Date, run: { id: string; error: string }): NotificationInput {
  return {
    key: `resync:${run.id}`,
    event: EVENTS.resyncFailed,
    occurredAt: now,
    summary: `Full resync ${run.id} failed`,
    details: { runId: run.id, error: run.error.slice(0, 500) },
    linkPath: "/admin/runs",
  };
}

/** Call in the transaction that settles mirror changes: the parks among them give mirror.parked. */
export async function changesParked(
  q: Queryable,
  now: Date,
  kind: string,
  settled: { outcome: string; reason?: string }[],
): Promise<void> {
  const parks = settled.filter((s) => s.outcome === "park");
  if (!parks.length) return;
  const reasons = [...new Set(parks.map((p) => p.reason ?? "refused by the platform"))];
  await notify(q, mirrorParked(now, { kind, count: parks.length, reasons }));
}

/** At most one per mirror kind and UTC day (until it is sent, it shows the latest batch parked). */
function mirrorParked(now: Date, parked: { kind: string; count: number; reasons: string[] }): NotificationInput {
  return {
    key: `mirror.parked:${parked.kind}:${now.toISOString().slice(0, 10)}`,
    event: EVENTS.mirrorParked,
    occurredAt: now,
    summary: `${parked.count} ${parked.kind} mirror change${parked.count === 1 ? "" : "s"} parked`,
    details: { kind: parked.kind, count: parked.count, reasons: parked.reasons.slice(0, 5) },
    linkPath: "/admin/mirror",
  };
}

/**
 * An account made by hand on the platform, confirmed by its lookup (platform.unmanaged_account):
 * once per account (its own incident, never resolved: the account's row records that it was raised).
 * Call in the transaction that records the confirmation.
 */
export function unmanagedAccountFound(
  now: Date,
  account: { userName: string; platformId: string | null; firstSeen: Date; addedBy: string | null; holds: string[] },
): NotificationInput {
  return {
    key: `unmanaged:${account.userName}`,
    event: EVENTS.unmanagedAccount,
    occurredAt: now,
    summary: `Platform account ${account.userName} is not managed by the IdP (added by ${account.addedBy ?? "an unknown actor"})`,
    details: {
      userName: account.userName,
      platformId: account.platformId,
      firstSeen: account.firstSeen.toISOString(),
      addedBy: account.addedBy,
      holds: account.holds.slice(0, 20),
    },
    linkPath: "/admin/access",
  };
}
