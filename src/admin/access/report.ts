import type { Database } from "../../db/database.js";
import { parseMapping, type Mapping } from "../../mapping/file.js";
import {
  countGrantsByWorkspace,
  getMappingInForceText,
  lastVerifyingResyncAt,
  listAccessDifferences,
  listAppliedHistory,
  listHeldAccounts,
  listHeldAccountsById,
  listIdpFacts,
  type AccessDifference,
  type HeldAccount,
  type HeldCursor,
  type HeldFilter,
  type IdpFacts,
} from "../../db/accessRepository.js";
import { listDeniesInForce, type AccessDeny } from "../../db/denyRepository.js";
import { listHolds, type Hold } from "../../db/holdRepository.js";
import { matchingRules } from "../../mapping/match.js";
import {
  explainGrants,
  grantKey,
  grantsOf,
  reasonsFor,
  type ExplainedGrant,
  type Grant,
  type GrantReason,
} from "../../mapping/reasons.js";
import { grantSince } from "./grants.js";

/**
 * The access report (docs/access-review.md): one row per user × grant the platform held, now or
 * at `at`, with the rules and groups that give it, since when it was held and when it was last
 * verified. Reads the connector's database only: no platform call, no budget.
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

export type AccessRow = Grant & {
  userId: string;
  userName: string;
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

type Context = { query: AccessQuery; mapping: Mapping | null; verifyingRunAt: Date | null };

export type AccessReportOptions = { db: Database; mappingSource?: string };

const parsed = new Map<string, Mapping>();

/** The mapping in force as recorded in the database (parsed once per text). */
async function mappingInForce(db: Database, source: string): Promise<Mapping | null> {
  const text = await getMappingInForceText(db);
  if (text === undefined) return null;
  const key = `${source}\n${text}`;
  let mapping = parsed.get(key);
  if (!mapping) {
    mapping = parseMapping(text, source);
    parsed.clear();
    parsed.set(key, mapping);
  }
  return mapping;
}

async function context(options: AccessReportOptions, query: AccessQuery): Promise<Context> {
  const [mapping, verifyingRunAt] = await Promise.all([
    mappingInForce(options.db, options.mappingSource ?? "mapping.yaml"),
    lastVerifyingResyncAt(options.db, query.at),
  ]);
  return { query, mapping, verifyingRunAt };
}

function rowMatches(row: AccessRow, q: AccessQuery): boolean {
  if (q.workspace && row.workspace !== q.workspace) return false;
  if (q.team && row.team !== q.team) return false;
  if (q.permission && row.permission !== q.permission) return false;
  if (q.admins && row.permission !== "admin") return false;
  const rules = row.reasons.flatMap((r) => ("rule" in r ? [r] : []));
  if (q.group && !rules.some((r) => r.groups.some((g) => g.toLowerCase() === q.group!.toLowerCase()))) return false;
  if (q.rule) {
    const want = q.rule.toLowerCase();
    if (!rules.some((r) => String(r.rule.line) === want || (r.rule.description ?? "").toLowerCase().includes(want)))
      return false;
  }
  return true;
}

type Batch = {
  accounts: HeldAccount[];
  history: Awaited<ReturnType<typeof listAppliedHistory>>;
  idp: Awaited<ReturnType<typeof listIdpFacts>>;
  denies: Map<string, AccessDeny[]>;
};

/** The next accounts after `cursor`, with their applied history and IdP facts (one query each). */
async function fetchBatch(
  db: Database,
  query: AccessQuery,
  cursor: HeldCursor | undefined,
  size: number,
  byId = false,
): Promise<Batch> {
  const filter = heldFilter(query);
  const accounts =
    byId && query.at
      ? await listHeldAccountsById(db, { ...filter, at: query.at }, cursor?.userId, size)
      : await listHeldAccounts(db, filter, cursor, size);
  if (!accounts.length) return { accounts, history: new Map(), idp: new Map(), denies: new Map() };
  const ids = accounts.map((a) => a.userId);
  const [history, idp, denies] = await Promise.all([
    listAppliedHistory(db, ids, query.at),
    listIdpFacts(db, ids),
    listDeniesInForce(db, ids, query.at),
  ]);
  return { accounts, history, idp, denies };
}

const lastOf = (accounts: HeldAccount[]): HeldCursor => ({
  userName: accounts[accounts.length - 1]!.userName,
  userId: accounts[accounts.length - 1]!.userId,
});

/** The rows of a batch, per account in order. */
function rowsOf(ctx: Context, { accounts, history, idp, denies }: Batch): AccessRow[][] {
  return accounts.map((account) => {
    const rows: AccessRow[] = [];
    const denied = new Map((denies.get(account.userId) ?? []).map((d) => [grantKey(d), d]));
    const since = grantSince(history.get(account.userId) ?? []);
    const facts = idp.get(account.userId);
    // Today: the account's own verification; as of a past moment: the last verifying run by then.
    const verified = ctx.query.at ? ctx.verifyingRunAt : account.verifiedAt;
    const applied = ctx.query.at ? account.appliedReasons : null;
    const explained = applied ?? currentReasons(ctx, account, facts);
    for (const { reasons, ...grant } of explained) {
      const start = since.get(grantKey(grant));
      const row: AccessRow = {
        ...grant,
        userId: account.userId,
        userName: account.userName,
        reasons,
        reasonsAsOf: applied ? "applied" : "current",
        firstAppliedAt: start?.since ?? null,
        appliedByLogId: start?.logId ?? null,
        verifiedAt: verified && (!start || verified >= start.since) ? verified : null,
        deny: null,
      };
      const deny = denied.get(grantKey(grant));
      if (deny) {
        row.deny = rowDeny(deny, true);
        denied.delete(grantKey(grant));
      }
      if (rowMatches(row, ctx.query)) rows.push(row);
    }
    // The grants the platform no longer holds because of a deny: shown where the grant would be.
    for (const deny of denied.values()) {
      const { scope, workspace, team, permission } = deny;
      const grant: Grant = { scope, workspace, team, permission };
      const row: AccessRow = {
        ...grant,
        userId: account.userId,
        userName: account.userName,
        reasons: deniedReasons(ctx, grant, facts),
        reasonsAsOf: "current",
        firstAppliedAt: null,
        appliedByLogId: null,
        verifiedAt: null,
        deny: rowDeny(deny, false),
      };
      if (rowMatches(row, ctx.query)) rows.push(row);
    }
    return rows;
  });
}

/** Why the IdP would give a denied grant: the mapping in force and the user's groups now. */
function deniedReasons(ctx: Context, grant: Grant, facts: IdpFacts | undefined): GrantReason[] {
  if (!ctx.mapping || !facts) return [];
  return reasonsFor(grant, matchingRules(facts.groups, ctx.mapping), ctx.mapping, facts.department);
}

/** Each grant the account holds, with the rules and groups that give it under the mapping in force and the groups now. */
function currentReasons(ctx: Context, account: HeldAccount, facts: IdpFacts | undefined): ExplainedGrant[] {
  if (ctx.mapping && facts) return explainGrants(account.held, facts.groups, ctx.mapping, facts.department);
  return grantsOf(account.held).map((grant) => ({ ...grant, reasons: [] }));
}

/** What SQL can narrow: "admins everywhere" is the permission `admin`. */
function heldFilter(q: AccessQuery): HeldFilter {
  return { ...q, ...(q.admins ? { permission: "admin" } : {}) };
}

const BATCH = 200;
/** A page stops scanning after this many accounts, so a rare filter answers quickly (with a cursor). */
const SCAN_LIMIT = 5_000;

function encodeCursor(c: HeldCursor): string {
  return Buffer.from(JSON.stringify([c.userName, c.userId])).toString("base64url");
}

export function decodeCursor(text: string | undefined): HeldCursor | undefined {
  if (!text) return undefined;
  try {
    const [userName, userId] = JSON.parse(Buffer.from(text, "base64url").toString("utf8")) as unknown[];
    if (typeof userName === "string" && typeof userId === "string" && /^[0-9a-f-]{36}$/i.test(userId))
      return { userName, userId };
  } catch {
    // fall through
  }
  return undefined;
}

/**
 * One page: at least `limit` rows unless the report ends (a user's rows are never split). Now, in
 * userName order; as of a past moment, in account id order, as the exports are: each batch then
 * reads only the log of the accounts after the cursor, instead of rebuilding the whole log's
 * latest entry per user for every batch of a page that filters in JavaScript (`rule`).
 */
export async function accessPage(
  options: AccessReportOptions,
  query: AccessQuery,
  cursor: HeldCursor | undefined,
  limit: number,
): Promise<{ rows: AccessRow[]; nextCursor: string | null }> {
  const ctx = await context(options, query);
  const rows: AccessRow[] = [];
  let scanned = 0;
  for (;;) {
    const batch = BATCH;
    const fetched = await fetchBatch(options.db, query, cursor, batch, query.at !== undefined);
    const accounts = fetched.accounts;
    const perAccount = rowsOf(ctx, fetched);
    let used = 0;
    for (; used < accounts.length && rows.length < limit; used++) {
      rows.push(...perAccount[used]!);
      cursor = { userName: accounts[used]!.userName, userId: accounts[used]!.userId };
      scanned++;
    }
    if (accounts.length < batch && used === accounts.length) return { rows, nextCursor: null };
    if (rows.length >= limit || scanned >= SCAN_LIMIT) return { rows, nextCursor: encodeCursor(cursor!) };
  }
}

/**
 * The whole report in batches (for exports): memory stays two batches of accounts; the next is
 * read while one is written. In userName order; as of a past moment, in account id order (each
 * batch then reads only its own accounts' log).
 */
export async function* accessRows(
  options: AccessReportOptions,
  query: AccessQuery,
  batchSize = 1_000,
): AsyncGenerator<AccessRow[]> {
  const ctx = await context(options, query);
  const byId = query.at !== undefined;
  let next: Promise<Batch> | undefined = fetchBatch(options.db, query, undefined, batchSize, byId);
  try {
    while (next) {
      const batch: Batch = await next;
      next =
        batch.accounts.length === batchSize
          ? fetchBatch(options.db, query, lastOf(batch.accounts), batchSize, byId)
          : undefined;
      if (batch.accounts.length) yield rowsOf(ctx, batch).flat();
    }
  } finally {
    next?.catch(() => undefined); // the consumer stopped early: the read ahead is dropped
  }
}

/** Users per workspace × permission (workspace null: company permissions). */
export async function accessTotals(options: AccessReportOptions, query: AccessQuery) {
  const totals = await countGrantsByWorkspace(options.db, query);
  return query.admins
    ? totals.filter((t) => t.permission === "admin")
    : query.permission
      ? totals.filter((t) => t.permission === query.permission)
      : totals;
}

/** What to explain apart: accounts the connector did not create or that drifted, and actions held for approval. */
export async function accessDifferences(
  options: AccessReportOptions,
): Promise<{ accounts: AccessDifference[]; held: Hold[] }> {
  const [accounts, held] = await Promise.all([
    listAccessDifferences(options.db, 500),
    listHolds(options.db, { pendingOnly: true }),
  ]);
  return { accounts, held };
}
