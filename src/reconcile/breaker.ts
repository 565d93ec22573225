/**
 * The mass-deprovision circuit breaker: an unusual wave of removals (a deleted group, a broken
 * IdP push) is held for an admin instead of executed. Pure.
 */
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
