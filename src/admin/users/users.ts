import { listUserLog } from "../../db/reconcile/logRepository.js";
import { getIdpUser } from "../../db/idp/userRepository.js";
import { getUserRow, searchUsers, type AdminUserRow } from "../../db/idp/userAdminQueries.js";
import { getQueueEntry, isQueued } from "../../db/reconcile/queueReads.js";
import { grantWords } from "../../reconcile/desiredSource.js";
import { isUuid } from "../../ids.js";
import { getAccount, type PlatformAccount } from "../../db/platform/accountRepository.js";
import { grantingRules } from "../../mapping/match.js";
import type { AdminDataDeps } from "../deps.js";
import { presentLogRow, type LogRow } from "../log.js";
import { permissionTree } from "../mapping/permissionTree.js";
import { permissionBundles, type PermissionBundle } from "../mapping/permissionBundles.js";
import { explainGrants } from "../../mapping/reasons.js";
import { grantListsOf, type GrantList, matchedRuleText, ruleGrantsText } from "../mapping/rules.js";
import { describeQueueEntry } from "../../reconcile/queueStatus.js";
import { platformFacts, type PlatformFacts } from "./platformFacts.js";

type UserRow = {
  id: string;
  userName: string;
  active: boolean;
  groups: number;
  lastReconciledAt: Date | null;
  state: string;
};
export type UsersPageData = { rows: UserRow[]; hasNext: boolean };
export type UsersQuery = { q?: string; page: number };

export type UserDetail = {
  id: string;
  userName: string;
  active: boolean;
  /** "this replica's mapping file differs from the mapping in force (version …)…", when it does. */
  mappingNotice?: string;
  /** The IdP record as stored (name, emails, externalId…). */
  idp: Record<string, unknown>;
  groups: string[];
  /** `lists`: the long lists `grants` abbreviates, in full (absent when there is none). */
  matchedRules: { rule: string; grants: string; lists?: GrantList[] }[];
  desired: unknown;
  lastApplied: unknown;
  /** The desired state's granular bundles, as the reviews show them: the diff draws each as one row. */
  bundles?: PermissionBundle[];
  /** The account was stripped of all access and is kept; deleted after `deleteAfter` (null: kept, an adopted account). */
  stripped?: { since: Date; deleteAfter: Date | null };
  /** Active campaign denies, in words: "<grant>: revoked in campaign …, by …, on …" (removed from `desired`). */
  denies?: string[];
  queued: boolean;
  /** The user's queue row in words (waiting to settle until …, deferred, parked), when queued. */
  queue?: string;
  /** What the platform's own record says of the account (src/admin/users/platformFacts.ts). */
  platform?: PlatformFacts;
  log: LogRow[];
};

const USER_LOG_SHOWN = 25;

/** A queue instant to the second: the settle window is seconds long. */
const toTheSecond = (at: Date) => `${at.toISOString().slice(0, 19).replace("T", " ")} UTC`;

/** One word for where a user stands: held, parked, queued, on the platform, or nothing yet. */
export function userState(
  u: Pick<AdminUserRow, "accountState" | "queued" | "parked" | "hold"> &
    Partial<Pick<AdminUserRow, "deleteAfter" | "stripped">> & { settleUntil?: Date | null },
  now?: Date,
): string {
  if (u.hold === "deprovision") return "deprovision held for approval";
  if (u.hold === "email_change") return "email change held for approval";
  if (u.parked) return "parked (failed)";
  // A stripped account waits for its DELETE: "on the platform · queued" read as work on its way.
  if (u.accountState === "active" && u.stripped)
    return u.deleteAfter
      ? `access removed · waiting to be deleted (${toTheSecond(u.deleteAfter)})`
      : "access removed · the account is kept (adopted)";
  const account =
    u.accountState === "active"
      ? "on the platform"
      : u.accountState === "creating"
        ? "being created"
        : "no platform account";
  if (!u.queued) return account;
  const settling = u.settleUntil && now && u.settleUntil > now;
  return settling ? `${account} · waiting to settle` : `${account} · queued`;
}

const presentUserRow = (u: AdminUserRow, now: Date): UserRow => ({
  id: u.id,
  userName: u.userName,
  active: u.active,
  groups: u.groups,
  lastReconciledAt: u.appliedAt,
  state: userState(u, now),
});

export async function usersPage(
  deps: Pick<AdminDataDeps, "db" | "clock">,
  query: UsersQuery,
  limit: number,
  offset: number,
): Promise<UsersPageData> {
  const page = await searchUsers(deps.db, query.q, limit, offset);
  const now = deps.clock.now();
  return { rows: page.rows.map((u) => presentUserRow(u, now)), hasNext: page.hasNext };
}

/**
 * One user, as the reconciler sees them: IdP record and groups → the rules that match → the
 * desired dashboard user under the mapping in force (DesiredAccess, as the reconciler asks it) →
 * what was last applied → the log.
 */
export async function userDetail(deps: AdminDataDeps, id: string): Promise<UserDetail | undefined> {
  if (!isUuid(id)) return undefined; // not a uuid: cannot exist (and must not reach a uuid parameter)
  const shown = await deps.desired.shown(deps.db);
  const [row, stored, access, account, log, queued] = await Promise.all([
    getUserRow(deps.db, id),
    getIdpUser(deps.db, id),
    deps.desired.ofUser(deps.db, id, shown.mapping),
    getAccount(deps.db, id),
    listUserLog(deps.db, id, USER_LOG_SHOWN),
    getQueueEntry(deps.db, id),
  ]);
  const queue = queued && { queue: describeQueueEntry(queued, deps.clock.now(), toTheSecond) };
  if (!row || !stored || !access)
    return account ? { ...(await deletedUserDetail(deps, account, log.map(presentLogRow))), ...queue } : undefined;
  const { user, mapping, denies } = access;
  const platform = await platformFacts(deps.db, user.id, account?.userName ?? user.userName);
  return {
    id: user.id,
    userName: user.userName,
    active: user.active,
    ...(shown.fileDiffers ? { mappingNotice: shown.fileDiffers } : {}),
    idp: stored.resource,
    groups: user.groups.map((g) => g.displayName),
    matchedRules: grantingRules(user.groups, user.assigned, mapping).map((m) => ({
      rule: matchedRuleText(m),
      grants: ruleGrantsText(m.rule),
      ...grantListsOf(m.rule),
    })),
    desired: permissionTree(access.desired) ?? undefined,
    bundles: access.desired
      ? permissionBundles(explainGrants(access.desired, user.groups, mapping, null, user.assigned))
      : [],
    ...(denies.length
      ? {
          denies: denies.map(
            (d) =>
              `${grantWords(d)}: revoked in campaign "${d.campaignName}", by ${d.decidedBy}, on ${d.decidedAt.toISOString()} (${d.comment})`,
          ),
        }
      : {}),
    lastApplied: permissionTree(account?.lastApplied) ?? undefined,
    ...strippedOf(account),
    queued: row.queued,
    ...queue,
    platform,
    log: log.map(presentLogRow),
  };
}

function strippedOf(account: PlatformAccount | undefined): Pick<UserDetail, "stripped"> {
  return account?.strippedAt
    ? { stripped: { since: account.strippedAt, deleteAfter: account.deleteAfter ?? null } }
    : {};
}

/** A user the IdP deleted while the platform still has their account: nothing is desired any more. */
async function deletedUserDetail(
  deps: AdminDataDeps,
  account: PlatformAccount,
  log: UserDetail["log"],
): Promise<UserDetail> {
  return {
    id: account.userId,
    userName: account.userName,
    active: false,
    idp: { deletedInTheIdp: true },
    groups: [],
    matchedRules: [],
    desired: undefined,
    lastApplied: permissionTree(account.lastApplied) ?? undefined,
    ...strippedOf(account),
    queued: await isQueued(deps.db, account.userId),
    platform: await platformFacts(deps.db, account.userId, account.userName),
    log,
  };
}
