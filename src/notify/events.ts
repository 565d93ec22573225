import { undecidedHoldCounts } from "../db/holdRepository.js";
import type { BudgetPolicy, SpendKind } from "../reconcile/budget.js";
import {
  countQueuedReductions,
  countQueuedUsers,
  enqueueNotification,
  firstDriftedUserNames,
  resolveIncident,
  type NotificationInput,
} from "../db/notificationRepository.js";
import type { Queryable } from "../db/database.js";

/**
 * The notification events. Their names are the contract with receivers (docs/operations.md,
 * "Alerts"): never rename one. Each builder says which incident a condition belongs to (`key`):
 * a condition seen again while its incident is open gives no second message.
 *
 * Call `notify` / `resolve` with the transaction that writes the state the message is about.
 */
export const EVENTS = {
  approvalRequired: "approval.required",
  approvalDecided: "approval.decided",
  quarantineStarted: "quarantine.started",
  quarantineEnded: "quarantine.ended",
  budgetExhausted: "budget.exhausted",
  driftFound: "drift.found",
  mirrorParked: "mirror.parked",
  resyncFailed: "resync.failed",
  idpSilent: "idp.silent",
  idpSilentEnded: "idp.silent.ended",
  samlCertificateExpiring: "saml.certificate.expiring",
  credentialExpiring: "credential.expiring",
  campaignRevoked: "campaign.revoked",
  campaignReminder: "campaign.reminder",
  campaignClosed: "campaign.closed",
  legacyRefused: "platform.legacy_refused",
  legacyRefusedEnded: "platform.legacy_refused.ended",
  test: "notification.test",
} as const;

export function notify(q: Queryable, n: NotificationInput): Promise<{ incidentId: string; queued: boolean }> {
  return enqueueNotification(q, n);
}

export function resolve(q: Queryable, n: NotificationInput): Promise<boolean> {
  return resolveIncident(q, n);
}

/** Call in the transaction that stores a hold: opens approval.required, or updates its count while unsent. */
export async function holdsChanged(q: Queryable, now: Date): Promise<void> {
  const held = await undecidedHoldCounts(q);
  if (held.count > 0) await notify(q, approvalRequired(now, held));
}

/** Call in the transaction that decides or drops a hold: resolves approval.required once none waits. */
export async function holdSettled(
  q: Queryable,
  now: Date,
  last: { decision: "approved" | "rejected" | "withdrawn"; by: string },
): Promise<void> {
  if ((await undecidedHoldCounts(q)).count === 0) await resolve(q, approvalDecided(now, last));
}

const APPROVALS = "approvals";

/** The breaker (or an email change) held actions; the count grows on the waiting message until it is sent. */
export function approvalRequired(now: Date, held: { count: number; kinds: string[] }): NotificationInput {
  return {
    key: APPROVALS,
    event: EVENTS.approvalRequired,
    occurredAt: now,
    summary: `${held.count} action${held.count === 1 ? "" : "s"} held for approval (${held.kinds.join(", ")})`,
    details: { count: held.count, kinds: held.kinds },
    linkPath: "/admin/approvals",
  };
}

/** No held action waits any more (the last one decided by an admin, or made moot by the IdP). */
function approvalDecided(
  now: Date,
  last: { decision: "approved" | "rejected" | "withdrawn"; by: string },
): NotificationInput {
  return {
    key: APPROVALS,
    event: EVENTS.approvalDecided,
    occurredAt: now,
    summary: `No held actions wait for approval any more (last: ${last.decision} by ${last.by})`,
    details: { lastDecision: last.decision, by: last.by },
    linkPath: "/admin/approvals",
  };
}

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

/**
 * Call in the transaction of a refused budget debit (live work, not verification). A refused
 * reduction means the reserve itself is spent: it is told apart, once per window too, saying that
 * reductions (access still to be taken away) are waiting.
 */
export async function budgetRefused(
  q: Queryable,
  now: Date,
  policy: BudgetPolicy,
  refused: { used: number; resetsAt: Date; windowStart: Date; kind: SpendKind },
): Promise<void> {
  const [backlog, reductions] = await Promise.all([countQueuedUsers(q), countQueuedReductions(q)]);
  await notify(
    q,
    budgetExhausted(now, {
      windowStart: refused.windowStart,
      used: refused.used,
      limit: policy.limit,
      backlog,
      reductions,
      reserveSpent: refused.kind === "reduction",
      resetsAt: refused.resetsAt,
    }),
  );
}

/** At most once per budget window, and once more if the reserve is spent: the window's start is in the key (a rolling window: its UTC day). */
export function budgetExhausted(
  now: Date,
  budget: {
    windowStart: Date;
    used: number;
    limit: number;
    backlog: number;
    resetsAt: Date;
    /** Queued users whose change takes access away (they go first when the budget allows). */
    reductions?: number;
    reserveSpent?: boolean;
  },
): NotificationInput {
  const reductions = budget.reductions ?? 0;
  const waiting = reductions
    ? `; ${reductions} reduction${reductions === 1 ? "" : "s"} of access waiting (first in line)`
    : "";
  return {
    key: `budget:${budget.windowStart.toISOString().slice(0, 10)}${budget.reserveSpent ? ":reserve" : ""}`,
    event: EVENTS.budgetExhausted,
    occurredAt: now,
    summary: `Platform budget ${budget.reserveSpent ? "and its reserve " : ""}spent (${budget.used}/${budget.limit}); ${budget.backlog} users wait until ${budget.resetsAt.toISOString()}${waiting}`,
    details: {
      used: budget.used,
      limit: budget.limit,
      backlog: budget.backlog,
      reductionsWaiting: reductions,
      reserveSpent: budget.reserveSpent ?? false,
      eta: budget.resetsAt.toISOString(),
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

const IDP_SILENT = "idp.silent";

export function idpSilent(now: Date, lastRequestAt: Date, hours: number): NotificationInput {
  return {
    key: IDP_SILENT,
    event: EVENTS.idpSilent,
    occurredAt: now,
    summary: `No authenticated SCIM request from the IdP for more than ${hours} hours: is its provisioning off, or its token broken?`,
    details: { lastRequestAt: lastRequestAt.toISOString(), silenceHours: hours },
    linkPath: "/admin",
  };
}

export function idpSilentEnded(now: Date, silentSince: Date): NotificationInput {
  return {
    key: IDP_SILENT,
    event: EVENTS.idpSilentEnded,
    occurredAt: now,
    summary: "The IdP is sending SCIM requests again",
    details: { silentSince: silentSince.toISOString() },
    linkPath: "/admin",
  };
}

export function samlCertificateExpiring(
  now: Date,
  cert: { fingerprint: string; subject: string; validTo: Date },
): NotificationInput {
  const days = Math.max(0, Math.floor((cert.validTo.getTime() - now.getTime()) / 86_400_000));
  return {
    key: `saml.cert:${cert.fingerprint}`,
    event: EVENTS.samlCertificateExpiring,
    occurredAt: now,
    summary: `The IdP's SAML signing certificate expires in ${days} days (${cert.validTo.toISOString().slice(0, 10)}); admins cannot sign in after that`,
    details: {
      subject: cert.subject,
      fingerprint: cert.fingerprint,
      validTo: cert.validTo.toISOString(),
      daysLeft: days,
    },
  };
}

/**
 * A reviewer revoked a grant in a campaign: the connector removed it on the platform (a local
 * deny), and the IdP admin is asked to remove the membership at the source (`groups`), which
 * ends the deny. One message per decided item.
 */
export function campaignRevoked(
  now: Date,
  r: {
    itemId: string;
    campaignId: string;
    campaignName: string;
    userName: string;
    grant: string;
    groups: string[];
    by: string;
    comment: string;
  },
): NotificationInput {
  return {
    key: `campaign.revoked:${r.campaignId}:${r.itemId}`,
    event: EVENTS.campaignRevoked,
    occurredAt: now,
    summary: `${r.userName}: ${r.grant} revoked in campaign "${r.campaignName}" by ${r.by}; remove it at the IdP (${r.groups.length ? r.groups.join(", ") : "no IdP group recorded"})`,
    details: {
      campaign: r.campaignName,
      userName: r.userName,
      grant: r.grant,
      groups: r.groups,
      by: r.by,
      comment: r.comment,
    },
    linkPath: `/admin/campaigns/${r.campaignId}`,
  };
}

/** Before the due date: who still has items to decide (once per campaign). */
export function campaignReminder(
  now: Date,
  c: { id: string; name: string; dueAt: Date; open: number; reviewers: Record<string, number> },
): NotificationInput {
  return {
    key: `campaign.reminder:${c.id}`,
    event: EVENTS.campaignReminder,
    occurredAt: now,
    summary: `Campaign "${c.name}" is due ${c.dueAt.toISOString()}: ${c.open} item${c.open === 1 ? "" : "s"} still to review`,
    details: { campaign: c.name, dueAt: c.dueAt.toISOString(), open: c.open, reviewers: c.reviewers },
    linkPath: `/admin/campaigns/${c.id}`,
  };
}

/** A campaign closed (at its due date, or by an admin), with what was left undecided and what was done with it. */
export function campaignClosed(
  now: Date,
  c: { id: string; name: string; kept: number; revoked: number; undecided: number; undecidedAction: string },
): NotificationInput {
  return {
    key: `campaign.closed:${c.id}`,
    event: EVENTS.campaignClosed,
    occurredAt: now,
    summary: `Campaign "${c.name}" closed: ${c.kept} kept, ${c.revoked} revoked, ${c.undecided} undecided (${c.undecidedAction === "revoke" ? "revoked at close" : "kept, reported"})`,
    details: {
      campaign: c.name,
      kept: c.kept,
      revoked: c.revoked,
      undecided: c.undecided,
      undecidedAction: c.undecidedAction,
    },
    linkPath: `/admin/campaigns/${c.id}`,
  };
}

const LEGACY_REFUSED = "platform-legacy-refused";

/** The platform refused a legacy permission string: grants carrying legacy strings are held. */
export function legacyRefused(now: Date, refused: { value: string; detail: string }): NotificationInput {
  return {
    key: LEGACY_REFUSED,
    event: EVENTS.legacyRefused,
    occurredAt: now,
    summary: `The platform refuses the legacy permission "${refused.value}": grants that carry legacy strings are held until the mapping is migrated (scim-connector mapping migrate FILE --write); reductions go on`,
    details: { value: refused.value, detail: refused.detail, fix: "scim-connector mapping migrate FILE --write" },
    linkPath: "/admin",
  };
}

/** The mapping no longer carries legacy strings and a held grant went out. */
export function legacyRefusedEnded(now: Date): NotificationInput {
  return {
    key: LEGACY_REFUSED,
    event: EVENTS.legacyRefusedEnded,
    occurredAt: now,
    summary: "The mapping speaks granular permissions; held grants are going out",
    details: {},
    linkPath: "/admin",
  };
}
