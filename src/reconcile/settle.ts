import type { DirtyTrigger } from "../vocabulary/reconcile.js";
import type { Plan } from "./planner.js";

/**
 * The settle window (docs/reconciler.md). A real IdP pushes a user's access one request at a
 * time, a few a second (Okta: the user, then one group PATCH per membership; Entra: the same in
 * each provisioning cycle). Applied as they come, each grant after the first costs one more PUT.
 * So a change that only adds access waits until the user has been quiet for `settleMs`, and the
 * grants that follow go out in the same call. Reductions never wait: taking access away is
 * urgent, and the planner compares the whole desired state, so a pending grant rides along.
 * Pure: the worker asks, the queue row carries the answer (a waiting grant survives a crash).
 */

export type SettlePolicy = {
  /** Quiet time that ends a burst (RECONCILE_SETTLE_MS; 0 turns the window off). */
  settleMs: number;
  /** The longest a burst is held, from its first held change (RECONCILE_SETTLE_MAX_MS). */
  maxMs: number;
};

/**
 * Holding stops this long before a UTC-day budget window resets, so that a grant never misses
 * the day it would have made without the window (workers notice a due row within
 * RECONCILE_POLL_MS, well inside this margin).
 */
export const END_OF_WINDOW_GUARD_MS = 10_000;

/**
 * Whether this plan, woken by this trigger, waits to settle: only grants (a create, an update
 * that takes nothing away) from the IdP. Mapping changes and resyncs are one mark per user, and
 * an admin's "reconcile now" is asked for now.
 */
export function waitsToSettle(plan: Plan, trigger: DirtyTrigger, verifyRun: string | null): boolean {
  if (trigger.kind !== "idp" || verifyRun) return false;
  if (plan.action === "email-change") return plan.interim !== null && !plan.interim.reduction;
  return plan.action === "create" || (plan.action === "update" && !plan.reduction);
}

/**
 * When a held grant goes out: `settleMs` after now (the window restarts on each change, since
 * each change re-classifies the row), but no later than `maxMs` after the burst's first held
 * change, and not within END_OF_WINDOW_GUARD_MS of a budget reset. Null: do not wait.
 */
export function settleDeadline(input: {
  now: Date;
  burstStartedAt: Date | null;
  policy: SettlePolicy;
  budgetResetsAt: Date | null;
}): Date | null {
  const { now, policy } = input;
  if (policy.settleMs <= 0) return null;
  const started = input.burstStartedAt ?? now;
  let deadline = Math.min(now.getTime() + policy.settleMs, started.getTime() + policy.maxMs);
  if (input.budgetResetsAt) deadline = Math.min(deadline, input.budgetResetsAt.getTime() - END_OF_WINDOW_GUARD_MS);
  return deadline > now.getTime() ? new Date(deadline) : null;
}
