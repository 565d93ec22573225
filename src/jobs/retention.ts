import type { Database } from "../db/database.js";
import type { Env } from "../config/env.js";
import { scrubDeactivatedUsers } from "../db/idp/userRepository.js";
import { deleteDebitsBefore } from "../db/reconcile/budgetRepository.js";
import { deleteRunsBefore } from "../db/reconcile/resyncRepository.js";
import { deletePlatformEventsBefore } from "../db/platform/eventRepository.js";

/**
 * Data retention (docs/operations.md, "Data retention"): how long deactivated IdP users keep their
 * personal data, and how long the budget ledger, resync runs and the platform's Security Event record
 * (docs/platform-record.md) are kept. 0 keeps forever. Run by
 * the scheduler beside the reconciliation log's own retention (RECONCILE_LOG_RETENTION_DAYS).
 */
export type RetentionPolicy = {
  deactivatedUserDays: number;
  budgetDebitDays: number;
  resyncRunDays: number;
  /** PLATFORM_EVENTS_RETENTION_DAYS (0: forever; unset: forever). */
  platformEventDays?: number;
};

export function retentionPolicyFromEnv(env: Env): RetentionPolicy {
  return {
    deactivatedUserDays: env.RETENTION_DEACTIVATED_USER_DAYS,
    budgetDebitDays: env.RETENTION_BUDGET_DEBITS_DAYS,
    resyncRunDays: env.RETENTION_RESYNC_RUNS_DAYS,
    platformEventDays: env.PLATFORM_EVENTS_RETENTION_DAYS,
  };
}

export type RetentionResult = { scrubbedUsers: number; debits: number; runs: number; platformEvents: number };

const DAY_MS = 86_400_000;

export async function applyRetention(db: Database, now: Date, policy: RetentionPolicy): Promise<RetentionResult> {
  const before = (days: number) => new Date(now.getTime() - days * DAY_MS);
  return {
    scrubbedUsers: policy.deactivatedUserDays ? await scrubDeactivatedUsers(db, before(policy.deactivatedUserDays)) : 0,
    debits: policy.budgetDebitDays ? await deleteDebitsBefore(db, before(policy.budgetDebitDays)) : 0,
    runs: policy.resyncRunDays ? await deleteRunsBefore(db, before(policy.resyncRunDays)) : 0,
    platformEvents: policy.platformEventDays
      ? await deletePlatformEventsBefore(db, before(policy.platformEventDays))
      : 0,
  };
}
