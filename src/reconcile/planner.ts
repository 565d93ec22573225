import type { DesiredDashboardUser } from "../mapping/types.js";
import { diffDashboardUsers, isReduction, type Change } from "./diff.js";

/**
 * planReconcile: given what the IdP wants and what the connector last applied, the least the
 * reconciler must do. Pure; it never branches on the event that woke it (level-triggered).
 */

export type AccountState = {
  userName: string;
  platformId: string | null;
  /** 'creating': a POST may have been sent without its answer being recorded. */
  state: "creating" | "active";
  lastApplied: DesiredDashboardUser | null;
};

export type Policies = { onEmailChange: "hold" | "recreate" };

export type Plan =
  | { action: "none"; reason: string }
  /** forget a local record that never reached the platform (nothing to call) */
  | { action: "forget"; reason: string }
  | { action: "create"; desired: DesiredDashboardUser; changes: Change[] }
  /** an earlier create's answer was lost: look up by userName first, never POST blindly */
  | { action: "resolve-create"; desired: DesiredDashboardUser | null; changes: Change[] }
  | { action: "update"; platformId: string; desired: DesiredDashboardUser; changes: Change[]; reduction: boolean }
  | { action: "deprovision"; platformId: string; changes: Change[] }
  | { action: "email-change"; platformId: string; desired: DesiredDashboardUser; changes: Change[] };

/** Queue priority by action: lower runs first. Deprovision > reduction > create > update > verification. */
export const PRIORITY = { deprovision: 0, reduction: 1, create: 2, update: 3, verify: 4 } as const;

export function planReconcile(
  desired: DesiredDashboardUser | null,
  account: AccountState | undefined,
  policies: Policies,
): Plan {
  if (account?.state === "creating") {
    return { action: "resolve-create", desired, changes: diffDashboardUsers(null, desired) };
  }
  if (!account || !account.platformId) {
    if (!desired)
      return account
        ? { action: "forget", reason: "no account on the platform and none wanted" }
        : { action: "none", reason: "not entitled" };
    return { action: "create", desired, changes: diffDashboardUsers(null, desired) };
  }
  const before = account.lastApplied;
  if (!desired)
    return { action: "deprovision", platformId: account.platformId, changes: diffDashboardUsers(before, null) };
  if (desired.userName.toLowerCase() !== account.userName.toLowerCase()) {
    if (policies.onEmailChange === "recreate") {
      // Delete now; the next reconcile finds no account and creates the new one.
      return { action: "deprovision", platformId: account.platformId, changes: diffDashboardUsers(before, desired) };
    }
    return {
      action: "email-change",
      platformId: account.platformId,
      desired,
      changes: diffDashboardUsers(before, desired),
    };
  }
  const changes = diffDashboardUsers(before, desired);
  if (!changes.length) return { action: "none", reason: "platform already matches" };
  return { action: "update", platformId: account.platformId, desired, changes, reduction: isReduction(changes) };
}

/** The queue priority of a plan, or null when it needs no platform call. */
export function priorityOf(plan: Plan): number | null {
  switch (plan.action) {
    case "none":
    case "forget":
    case "email-change":
      return null;
    case "deprovision":
      return PRIORITY.deprovision;
    case "resolve-create":
      return plan.desired ? PRIORITY.create : PRIORITY.deprovision;
    case "create":
      return PRIORITY.create;
    case "update":
      return plan.reduction ? PRIORITY.reduction : PRIORITY.update;
  }
}
