import { enqueueNotification, resolveIncident, type NotificationInput } from "../db/notify/notificationRepository.js";
import type { Queryable } from "../db/database.js";

/**
 * The notification events. Their names are the contract with receivers (docs/operations.md,
 * "Alerts"): never rename one. Each builder says which incident a condition belongs to (`key`):
 * a condition seen again while its incident is open gives no second message. The builders live by
 * family: the reconciler's (reconcileEvents.ts), the platform side's (platformEvents.ts), the
 * campaigns' (campaignEvents.ts), and the conditions found by looking, next to their checks
 * (conditions.ts, credentialExpiry.ts).
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
  unmanagedAccount: "platform.unmanaged_account",
  test: "notification.test",
} as const;

export function notify(q: Queryable, n: NotificationInput): Promise<{ incidentId: string; queued: boolean }> {
  return enqueueNotification(q, n);
}

export function resolve(q: Queryable, n: NotificationInput): Promise<boolean> {
  return resolveIncident(q, n);
}
