import type { Database } from "../../db/database.js";
import type { DesiredAccess } from "../../mapping/desiredAccess.js";
import {
  countGrantsByWorkspace,
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
} from "../../db/review/accessRepository.js";
import { listDeniesInForce } from "../../db/campaigns/denyRepository.js";
import { listHolds, type Hold } from "../../db/reconcile/holdRepository.js";
import { listConfirmedUnmanaged, type UnmanagedAccountView } from "../../platformRecord/unmanaged.js";
import { platformFactsOf } from "./platform.js";
import { rowsOf, type AccessQuery, type AccessRow, type RowBatch, type RowContext } from "./rows.js";

export type { AccessQuery, AccessRow, AccessRowDeny } from "./rows.js";

/**
 * The access report (docs/access-review.md): one row per user × grant the platform held, now or
 * at `at`, with the rules and groups that give it, since when it was held and when it was last
 * verified (the rows: ./rows.ts). Reads the connector's database only: no platform call, no budget.
 */

/** `desired`: the mapping in force, whose rules explain today's grants (src/mapping/desiredAccess.ts). */
export type AccessReportOptions = { db: Database; desired: DesiredAccess };

async function context(options: AccessReportOptions, query: AccessQuery): Promise<RowContext> {
  const [mapping, verifyingRunAt] = await Promise.all([
    options.desired.inForceIfAny(options.db),
    lastVerifyingResyncAt(options.db, query.at),
  ]);
  return { query, mapping, verifyingRunAt };
}

/** The next accounts after `cursor`, with their applied history and IdP facts (one query each). */
async function fetchBatch(
  db: Database,
  query: AccessQuery,
  cursor: HeldCursor | undefined,
  size: number,
  byId = false,
): Promise<RowBatch> {
  const filter = heldFilter(query);
  const accounts =
    byId && query.at
      ? await listHeldAccountsById(db, { ...filter, at: query.at }, cursor?.userId, size)
      : await listHeldAccounts(db, filter, cursor, size);
  if (!accounts.length) return { accounts, history: new Map(), idp: new Map(), denies: new Map() };
  const ids = accounts.map((a) => a.userId);
  const [history, idp, denies, platform] = await Promise.all([
    listAppliedHistory(db, ids, query.at),
    listIdpFacts(db, ids),
    listDeniesInForce(db, ids, query.at),
    query.at ? undefined : platformFactsOf(db, accounts),
  ]);
  return { accounts, history, idp, denies, ...(platform ? { platform } : {}) };
}

const lastOf = (accounts: HeldAccount[]): HeldCursor => ({
  userName: accounts[accounts.length - 1]!.userName,
  userId: accounts[accounts.length - 1]!.userId,
});

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
  let next: Promise<RowBatch> | undefined = fetchBatch(options.db, query, undefined, batchSize, byId);
  try {
    while (next) {
      const batch: RowBatch = await next;
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

/**
 * What to explain apart: accounts the connector did not create or that drifted, actions held for
 * approval, and accounts made by hand on the platform that the IdP does not manage (confirmed).
 */
export async function accessDifferences(
  options: AccessReportOptions,
): Promise<{ accounts: AccessDifference[]; held: Hold[]; unmanaged: UnmanagedAccountView[] }> {
  const [accounts, held, unmanaged] = await Promise.all([
    listAccessDifferences(options.db, 500),
    listHolds(options.db, { pendingOnly: true }),
    listConfirmedUnmanaged(options.db),
  ]);
  return { accounts, held, unmanaged };
}
