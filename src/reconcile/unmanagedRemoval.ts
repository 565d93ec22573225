/**
 * An account made by hand in the platform's dashboard that a campaign's reviewer revoked
 * (src/review/campaigns/unmanaged.ts): the reconciler takes it away as it takes away an IdP user's
 * account, through the same executors (one PUT for a strip, one DELETE behind an admin's approval),
 * each debited from the budget ledger as a reduction and logged. The account has no IdP user: it
 * is known by its `accountId` (src/db/platform/unmanagedRemovalRepository.ts), and its state is what the
 * discovery lane's lookup found. Pure.
 */
import type { UnmanagedAccount } from "../db/platform/unmanagedAccountRepository.js";
import type { DesiredDashboardUser } from "../mapping/types.js";
import { planReconcile, type AccountState, type Plan } from "./planner.js";

/** The account as the planner reads an account it looks after: what the lookup found it holding. */
export function unmanagedAccountState(account: UnmanagedAccount): AccountState {
  const p = account.permissions;
  const held: DesiredDashboardUser = {
    userName: account.userName,
    givenName: account.profile?.givenName ?? "",
    familyName: account.profile?.familyName ?? "",
    department: account.profile?.department ?? "",
    companyPermissions: p?.companyPermissions ?? [],
    ...(p?.roles ? { roles: p.roles } : {}),
    workspaces: p?.workspaces ?? [],
    ...(p?.permissionModel ? { permissionModel: p.permissionModel } : {}),
  };
  return {
    userName: account.userName,
    platformId: account.platformId,
    state: "active",
    lastApplied: held,
    createdByConnector: false,
    strippedAt: null,
    deleteAfter: null,
  };
}

/**
 * What the reviewer's decision takes: a strip is the planner's strip of an adopted account whose
 * IdP user is gone (one PUT, then nothing kept locally); a delete is its deprovision (one DELETE,
 * which the executor holds for an admin: executeRemovals.ts `breakerHolds`).
 */
export function planUnmanagedRemoval(account: UnmanagedAccount, now: Date): Plan {
  if (!account.removal || !account.platformId) return { action: "none", reason: "no removal decided" };
  return planReconcile(
    null,
    unmanagedAccountState(account),
    {
      onEmailChange: "hold",
      onAdoptedDeprovision: account.removal.removal === "delete" ? "delete" : "strip",
      deprovisionGraceMs: 0,
    },
    { now, idpDeleted: true },
  );
}

/** Why the account goes, in the log's words. */
export function unmanagedRemovalWords(account: UnmanagedAccount): string {
  const r = account.removal;
  const made = `account made by hand in the platform's dashboard${account.addedBy ? ` by ${account.addedBy}` : ""}`;
  return r ? `${made}, revoked by ${r.by}${r.comment ? `: ${r.comment}` : ""}` : made;
}
