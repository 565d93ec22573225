import { inSameTerms, type Equivalents } from "../mapping/granular.js";
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
  /** False for an account found on the platform (a 409 on create) rather than created; absent: created. */
  createdByConnector?: boolean;
  /** When the account was stripped of every permission and kept (absent or null: not stripped). */
  strippedAt?: Date | null;
  /** When a stripped account may be deleted (null: kept stripped, never deleted). */
  deleteAfter?: Date | null;
};

export type Policies = {
  onEmailChange: "hold" | "recreate";
  /** How long an account whose user lost all access is kept stripped before its DELETE (0 or absent: delete at once). */
  deprovisionGraceMs?: number;
  /** What deprovisioning does to an adopted account: strip it and keep it, or treat it like the connector's own. */
  onAdoptedDeprovision?: "strip" | "delete";
};

/**
 * The facts a plan depends on besides the two states: the time (for the grace), whether the IdP
 * user is gone, and the mapping's `vocabulary.equivalents` (to compare a legacy state with a
 * granular one).
 */
export type PlanFacts = { now: Date; idpDeleted?: boolean; equivalents?: Equivalents };

export type Plan =
  | { action: "none"; reason: string }
  /** forget a local record that never reached the platform, or an adopted account left stripped (nothing to call) */
  | { action: "forget"; reason: string }
  | { action: "create"; desired: DesiredDashboardUser; changes: Change[] }
  /** an earlier create's answer was lost: look up by userName first, never POST blindly */
  | { action: "resolve-create"; desired: DesiredDashboardUser | null; changes: Change[] }
  | { action: "update"; platformId: string; desired: DesiredDashboardUser; changes: Change[]; reduction: boolean }
  /**
   * The account holds in legacy terms exactly what the desired state grants in granular terms:
   * nothing to send; the record is re-based to the granular state (the move to granular
   * permissions costs no call for an account whose access does not change).
   */
  | { action: "rebase"; platformId: string; desired: DesiredDashboardUser }
  /**
   * The user lost all access: PUT the account with no permissions now (a reduction) and keep it;
   * delete it after `deleteAfter` (null: never). `forget`: the IdP user is gone and the account is
   * an adopted one kept on the platform, so the local record goes once it is stripped.
   */
  | {
      action: "strip";
      platformId: string;
      stripped: DesiredDashboardUser;
      changes: Change[];
      deleteAfter: Date | null;
      forget: boolean;
    }
  /** A stripped account waiting for its grace to end: nothing to call before `deleteAfter`. */
  | { action: "await-delete"; platformId: string; deleteAfter: Date }
  | { action: "deprovision"; platformId: string; changes: Change[]; reason: DeprovisionReason }
  /** RECONCILE_ON_EMAIL_CHANGE=recreate: delete the account under the old userName and create the new one, in one pass. */
  | { action: "recreate"; platformId: string; desired: DesiredDashboardUser; changes: Change[] }
  /**
   * The userName changed and waits for an admin; only the rename waits. `interim` is the rest of
   * the change (grants, reductions) applied now to the existing account under its current userName.
   */
  | {
      action: "email-change";
      platformId: string;
      desired: DesiredDashboardUser;
      changes: Change[];
      interim: { desired: DesiredDashboardUser; changes: Change[]; reduction: boolean } | null;
    };

/** Why an account is deleted: the IdP deleted the user, its grace ended, or the grace is off. */
export type DeprovisionReason = "idp-deleted" | "grace-ended" | "no-grace";

/** Queue priority by action: lower runs first. Deprovision > reduction > create > update > verification. */
export const PRIORITY = { deprovision: 0, reduction: 1, create: 2, update: 3, verify: 4 } as const;

export function planReconcile(
  desired: DesiredDashboardUser | null,
  account: AccountState | undefined,
  policies: Policies,
  facts: PlanFacts,
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
  if (!desired) return planRemoval(account, account.platformId, policies, facts);
  const terms = inSameTerms(account.lastApplied, desired, facts.equivalents ?? {});
  const before = terms.before;
  if (desired.userName.toLowerCase() !== account.userName.toLowerCase()) {
    const changes = diffDashboardUsers(before, desired);
    if (policies.onEmailChange === "recreate")
      return { action: "recreate", platformId: account.platformId, desired, changes };
    // Only the rename waits: the rest applies now to the account under its current userName.
    const underCurrentName = { ...desired, userName: account.userName };
    const interimChanges = diffDashboardUsers(before, underCurrentName);
    const interim = interimChanges.length
      ? { desired: underCurrentName, changes: interimChanges, reduction: isReduction(interimChanges) }
      : null;
    return { action: "email-change", platformId: account.platformId, desired, changes, interim };
  }
  const changes = diffDashboardUsers(before, terms.after);
  if (!changes.length)
    return terms.rebased
      ? { action: "rebase", platformId: account.platformId, desired }
      : { action: "none", reason: "platform already matches" };
  return { action: "update", platformId: account.platformId, desired, changes, reduction: isReduction(changes) };
}

/**
 * The user should have no account. Strip now, delete later: the account is PUT with no
 * permissions at once and deleted only when the grace ends, so a move or a reactivation within
 * the grace restores it with one PUT. A user deleted in the IdP is deleted at once; an adopted
 * account may be kept stripped for good (RECONCILE_ON_ADOPTED_DEPROVISION=strip).
 */
function planRemoval(account: AccountState, platformId: string, policies: Policies, facts: PlanFacts): Plan {
  const before = account.lastApplied;
  const keep = account.createdByConnector === false && policies.onAdoptedDeprovision !== "delete";
  const graceMs = policies.deprovisionGraceMs ?? 0;
  const deprovision = (reason: DeprovisionReason): Plan => ({
    action: "deprovision",
    platformId,
    changes: diffDashboardUsers(before, null),
    reason,
  });
  if (!keep && facts.idpDeleted) return deprovision("idp-deleted");
  if (!keep && graceMs <= 0) return deprovision("no-grace");
  const stripped = strippedUser(account);
  const changes = diffDashboardUsers(before, stripped);
  const strip = (deleteAfter: Date | null): Plan => ({
    action: "strip",
    platformId,
    stripped,
    changes,
    deleteAfter,
    forget: keep && facts.idpDeleted === true,
  });
  if (!account.strippedAt) return strip(keep ? null : new Date(facts.now.getTime() + graceMs));
  // A stripped account holds access again only by drift (someone granted it on the platform and an
  // enforcing verification recorded it): it is stripped again, its delete keeping its time.
  if (keep) {
    if (changes.length > 0) return strip(null);
    return facts.idpDeleted
      ? { action: "forget", reason: "deleted in the IdP; the adopted account stays on the platform, stripped" }
      : { action: "none", reason: "stripped; an adopted account is kept (RECONCILE_ON_ADOPTED_DEPROVISION=strip)" };
  }
  const deleteAfter = account.deleteAfter ?? facts.now;
  if (facts.now.getTime() >= deleteAfter.getTime()) return deprovision("grace-ended");
  if (changes.length > 0) return strip(deleteAfter);
  return { action: "await-delete", platformId, deleteAfter };
}

/** The account as last applied, with no permissions: what a strip PUTs (the platform's PUT replaces the whole resource). */
export function strippedUser(account: Pick<AccountState, "userName" | "lastApplied">): DesiredDashboardUser {
  const last = account.lastApplied;
  return {
    userName: last?.userName ?? account.userName,
    givenName: last?.givenName ?? "",
    familyName: last?.familyName ?? "",
    department: last?.department ?? "",
    companyPermissions: [],
    workspaces: [],
  };
}

/** Whether carrying out this plan takes access away: it is funded from the reserve and never waits. */
export function isReductionPlan(plan: Plan): boolean {
  switch (plan.action) {
    case "strip":
    case "deprovision":
      return true;
    case "update":
      return plan.reduction;
    case "email-change":
      return plan.interim?.reduction ?? false;
    case "resolve-create":
      return plan.desired === null;
    default:
      return false;
  }
}

/** The queue priority of a plan, or null when it needs no platform call. */
export function priorityOf(plan: Plan): number | null {
  switch (plan.action) {
    case "none":
    case "forget":
    case "rebase":
      return null;
    case "email-change":
      if (!plan.interim) return null;
      return plan.interim.reduction ? PRIORITY.reduction : PRIORITY.update;
    case "strip":
    case "await-delete":
    case "deprovision":
    case "recreate":
      return PRIORITY.deprovision;
    case "resolve-create":
      return plan.desired ? PRIORITY.create : PRIORITY.deprovision;
    case "create":
      return PRIORITY.create;
    case "update":
      return plan.reduction ? PRIORITY.reduction : PRIORITY.update;
  }
}
