import type { HeldAccount, IdpFacts } from "../../db/review/accessRepository.js";
import type { AccessDeny } from "../../db/campaigns/denyRepository.js";
import type { Mapping } from "../../mapping/compiled.js";
import { grantingRules } from "../../mapping/match.js";
import {
  explainGrants,
  grantKey,
  grantsOf,
  reasonsFor,
  reviewableGrants,
  stringsOf,
  type ExplainedGrant,
  type Grant,
  type GrantReason,
} from "../../mapping/reasons.js";
import type { DesiredDashboardUser } from "../../mapping/types.js";
import { bundleSince, grantSince } from "./grants.js";
import { NO_PLATFORM_FACTS, platformColumns, type AccountPlatformFacts, type PlatformColumns } from "./platform.js";

/**
 * The access report's rows (docs/access-review.md): one per user × reviewable grant the platform
 * held, as src/mapping/reasons.ts `explainGrants` makes them (a legacy state's strings one row
 * each; a granular state's grouped by the rule that gives them), with the strings each gives.
 */

export type AccessQuery = {
  at?: Date;
  user?: string;
  workspace?: string;
  team?: string;
  permission?: string;
  group?: string;
  /** A rule's line number, or words of its description. */
  rule?: string;
  /** Only the `admin` permission, company-wide or in a workspace. */
  admins?: boolean;
};

export type AccessRow = Grant &
  PlatformColumns & {
    userId: string;
    userName: string;
    /** The strings the grant gives (a bundle's, or its one string, role or set; none for the department). */
    permissions: string[];
    /** How many: a bundle of 45 strings is one row that says 45. */
    count: number;
    reasons: GrantReason[];
    /**
     * Where the reasons come from: recorded when the state was applied (as of a past moment), or
     * the mapping and IdP groups now (today's report, and entries that recorded none).
     */
    reasonsAsOf: "applied" | "current";
    /** When the platform first held this grant without a break since (null: before the log's retention). */
    firstAppliedAt: Date | null;
    /** The log entry that applied it then. */
    appliedByLogId: string | null;
    /** The verification that covers this grant (null: not verified since it was applied). */
    verifiedAt: Date | null;
    /** A campaign's deny in force on this grant (null: none). */
    deny: AccessRowDeny | null;
  };

/**
 * A deny on a row, in words ("revoked in campaign …, by …, on …"). `onPlatform`: the platform still
 * held the grant (its removal was queued); otherwise the row is the grant the IdP would give, kept
 * off the platform by the deny.
 */
export type AccessRowDeny = {
  id: string;
  campaignId: string | null;
  campaignName: string;
  decidedBy: string;
  decidedAt: Date;
  comment: string;
  words: string;
  onPlatform: boolean;
};

export type RowContext = { query: AccessQuery; mapping: Mapping | null; verifyingRunAt: Date | null };

/** A batch of accounts with their applied history, IdP facts and denies in force. */
export type RowBatch = {
  accounts: HeldAccount[];
  history: Map<string, { logId: string; at: Date; after: DesiredDashboardUser | null }[]>;
  idp: Map<string, IdpFacts>;
  denies: Map<string, AccessDeny[]>;
  /** What the platform's own record says of each account (absent: a report as of a past moment). */
  platform?: Map<string, AccountPlatformFacts>;
};

function rowDeny(d: AccessDeny, onPlatform: boolean): AccessRowDeny {
  return {
    id: d.id,
    campaignId: d.campaignId,
    campaignName: d.campaignName,
    decidedBy: d.decidedBy,
    decidedAt: d.decidedAt,
    comment: d.comment,
    words: `revoked in campaign "${d.campaignName}", by ${d.decidedBy}, on ${d.decidedAt.toISOString()}`,
    onPlatform,
  };
}

/** The per-string keys of a grant (a bundle's strings each; denies and history are per string). */
const stringKeys = (grant: Grant): string[] =>
  grant.bundle ? grant.bundle.map((permission) => grantKey({ ...grant, permission })) : [grantKey(grant)];

function rowMatches(row: AccessRow, q: AccessQuery): boolean {
  if (q.workspace && row.workspace !== q.workspace) return false;
  if (q.team && row.team !== q.team) return false;
  if (q.permission && row.permission !== q.permission && !row.bundle?.includes(q.permission)) return false;
  if (q.admins && row.permission !== "admin" && !row.bundle?.includes("admin")) return false;
  const rules = row.reasons.flatMap((r) => ("rule" in r ? [r] : []));
  if (q.group && !rules.some((r) => r.groups.some((g) => g.toLowerCase() === q.group!.toLowerCase()))) return false;
  if (q.rule) {
    const want = q.rule.toLowerCase();
    if (!rules.some((r) => String(r.rule.line) === want || (r.rule.description ?? "").toLowerCase().includes(want)))
      return false;
  }
  return true;
}

/** A row of `account` for `grant`: the user, the strings it gives and their count, then `history` (when held since, verified, denied). */
function accessRow(
  account: HeldAccount,
  grant: Grant,
  reasons: GrantReason[],
  history: Pick<AccessRow, "reasonsAsOf" | "firstAppliedAt" | "appliedByLogId" | "verifiedAt" | "deny">,
): AccessRow {
  const permissions = stringsOf(grant);
  return {
    ...grant,
    userId: account.userId,
    userName: account.userName,
    permissions,
    count: permissions.length,
    reasons,
    ...NO_PLATFORM_FACTS,
    ...history,
  };
}

/** The rows of a batch, per account in order. */
export function rowsOf(ctx: RowContext, { accounts, history, idp, denies, platform }: RowBatch): AccessRow[][] {
  return accounts.map((account) => {
    const rows: AccessRow[] = [];
    const denied = new Map((denies.get(account.userId) ?? []).map((d) => [grantKey(d), d]));
    const since = grantSince(history.get(account.userId) ?? []);
    const facts = idp.get(account.userId);
    // Today: the account's own verification; as of a past moment: the last verifying run by then.
    const verified = ctx.query.at ? ctx.verifyingRunAt : account.verifiedAt;
    const applied = ctx.query.at ? account.appliedReasons : null;
    const explained = applied ? reviewableGrants(account.held, applied) : currentReasons(ctx, account, facts);
    for (const { reasons, ...grant } of explained) {
      const start = bundleSince(since, stringKeys(grant));
      const row = accessRow(account, grant, reasons, {
        reasonsAsOf: applied ? "applied" : "current",
        firstAppliedAt: start?.since ?? null,
        appliedByLogId: start?.logId ?? null,
        verifiedAt: verified && (!start || verified >= start.since) ? verified : null,
        deny: null,
      });
      Object.assign(row, platformColumns(platform?.get(account.userId), stringKeys(grant)));
      // A deny on any string of the row (a revoked bundle's are all its strings) marks the row.
      for (const key of stringKeys(grant)) {
        const deny = denied.get(key);
        if (!deny) continue;
        row.deny ??= rowDeny(deny, true);
        denied.delete(key);
      }
      if (rowMatches(row, ctx.query)) rows.push(row);
    }
    // The grants the platform no longer holds because of a deny: shown where the grant would be,
    // the strings of one revoked bundle as one row.
    for (const [grant, deny] of deniedGrants([...denied.values()])) {
      const row = accessRow(account, grant, deniedReasons(ctx, grant, facts), {
        reasonsAsOf: "current",
        firstAppliedAt: null,
        appliedByLogId: null,
        verifiedAt: null,
        deny: rowDeny(deny, false),
      });
      Object.assign(row, platformColumns(platform?.get(account.userId), []));
      if (rowMatches(row, ctx.query)) rows.push(row);
    }
    return rows;
  });
}

/** Denies as grants: one per deny, or one bundle per revoked item (its strings that the deny keeps off). */
function deniedGrants(denies: readonly AccessDeny[]): [Grant, AccessDeny][] {
  const grants = new Map<string, [Grant, AccessDeny]>();
  for (const deny of denies) {
    const { scope, workspace, team, permission, partOf } = deny;
    if (!partOf) {
      grants.set(`deny ${deny.id}`, [{ scope, workspace, team, permission }, deny]);
      continue;
    }
    const key = JSON.stringify([deny.itemId, partOf, scope, workspace, team]);
    const found = grants.get(key);
    if (found) found[0].bundle!.push(permission);
    else grants.set(key, [{ scope, workspace, team, permission: partOf, bundle: [permission] }, deny]);
  }
  return [...grants.values()];
}

/** Why the IdP would give a denied grant: the mapping in force and the user's groups now. */
function deniedReasons(ctx: RowContext, grant: Grant, facts: IdpFacts | undefined): GrantReason[] {
  if (!ctx.mapping || !facts) return [];
  return reasonsFor(grant, grantingRules(facts.groups, facts.assigned, ctx.mapping), ctx.mapping, facts.department);
}

/** Each grant the account holds, with the rules and groups that give it under the mapping in force and the groups now. */
function currentReasons(ctx: RowContext, account: HeldAccount, facts: IdpFacts | undefined): ExplainedGrant[] {
  if (ctx.mapping && facts)
    return explainGrants(account.held, facts.groups, ctx.mapping, facts.department, facts.assigned);
  return reviewableGrants(
    account.held,
    grantsOf(account.held).map((grant) => ({ ...grant, reasons: [] })),
  );
}
