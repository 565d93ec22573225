import type { Plan } from "../reconcile/planner.js";

/** Platform calls a plan is expected to cost (the dry run's price list). Pure. */
export function callsOf(plan: Plan): number {
  switch (plan.action) {
    case "none":
    case "forget":
    case "rebase":
    case "await-delete":
      return 0;
    case "email-change":
      return plan.interim ? 1 : 0; // only the rename waits for an admin
    case "create":
    case "update":
    case "strip":
    case "deprovision":
      return 1;
    case "resolve-create":
    case "recreate":
      return 2; // a lookup, then a create or a delete; a delete, then a create
  }
}

/** Days of budget a cost takes at `perDay` calls, after `remainingToday`. */
export function daysAtPace(calls: number, remainingToday: number, perDay: number): number {
  if (calls <= remainingToday) return 0;
  return perDay > 0 ? Math.ceil((calls - remainingToday) / perDay) : Infinity;
}
