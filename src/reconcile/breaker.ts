/**
 * The mass-deprovision circuit breaker: an unusual wave of removals (a deleted group, a broken
 * IdP push) is held for an admin instead of executed. The decision is pure (`shouldHoldDeprovision`);
 * the counts it decides on are read here too (`deleteWave`, `stripWave`), and the executors
 * (execute/removals.ts) write the hold.
 */
import type { Queryable } from "../db/database.js";
import { countUndecidedHolds } from "../db/reconcile/holdRepository.js";
import { countAccounts, countStripsToDeleteSince } from "../db/platform/accountRepository.js";
import { countDeprovisionsSince } from "../db/reconcile/logRepository.js";
import { countPendingDeprovisions } from "../db/reconcile/queueReads.js";
import { PRIORITY } from "./planner.js";

export type BreakerPolicy = { minimum: number; percent: number };

/** Deprovisions allowed per hour: the larger of the minimum and `percent` of the accounts. */
export function deprovisionThreshold(policy: BreakerPolicy, accounts: number): number {
  return Math.max(policy.minimum, Math.ceil((accounts * policy.percent) / 100));
}

/** Hold when the deprovisions done in the last hour plus those pending (this one included) pass the threshold. */
export function shouldHoldDeprovision(
  policy: BreakerPolicy,
  accounts: number,
  doneLastHour: number,
  pending: number,
): boolean {
  return doneLastHour + pending > deprovisionThreshold(policy, accounts);
}

const HOUR_MS = 3_600_000;

/**
 * The wave a DELETE now would join: the accounts held, the deletes of the last hour, and what is
 * pending, queued or already held (without the held ones, a wave would be held only until the rest
 * of it fit under the threshold, which then ran).
 */
export async function deleteWave(
  db: Queryable,
  now: Date,
): Promise<{ accounts: number; doneLastHour: number; pending: number }> {
  const [accounts, doneLastHour, queued, held] = await Promise.all([
    countAccounts(db),
    countDeprovisionsSince(db, new Date(now.getTime() - HOUR_MS)),
    countPendingDeprovisions(db, now, PRIORITY.deprovision),
    countUndecidedHolds(db, "deprovision"),
  ]);
  return { accounts, doneLastHour, pending: queued + held };
}

/** The wave a strip joins: as `deleteWave`, with the accounts stripped in the last hour apart. */
export async function stripWave(
  db: Queryable,
  now: Date,
): Promise<{ accounts: number; deleted: number; stripped: number; queued: number; held: number }> {
  const hourAgo = new Date(now.getTime() - HOUR_MS);
  const [accounts, deleted, stripped, queued, held] = await Promise.all([
    countAccounts(db),
    countDeprovisionsSince(db, hourAgo),
    countStripsToDeleteSince(db, hourAgo),
    countPendingDeprovisions(db, now, PRIORITY.deprovision),
    countUndecidedHolds(db, "deprovision"),
  ]);
  return { accounts, deleted, stripped, queued, held };
}
