import { createHash } from "node:crypto";
// canonicalize stays at 4.0.0: 5.x declares Node >= 22 where package.json promises ^20.19, and
// writes the same bytes for JSON (test/audit/canonicalize.unit.test.ts holds RFC 8785's answers).
import canonicalize from "canonicalize";
import type { Queryable } from "./database.js";

/**
 * Hash chains over append-only tables (docs/access-review.md, "The tamper-evident log"). An entry's
 * `chain_hash` is SHA-256(hash before it, "\n", its canonical bytes); the chain's head row in
 * `audit_chains` is locked by each append until the transaction ends, so appends from any replica
 * take one order, and the table's ids (drawn after the lock) follow it.
 */

/** A chained table: its chain's name in audit_chains, and the table whose `id` orders it. */
export type ChainedTable = { chain: string; table: string };

export const RECONCILE_LOG_CHAIN: ChainedTable = { chain: "reconcile_log", table: "reconcile_log" };
export const CAMPAIGN_DECISIONS_CHAIN: ChainedTable = { chain: "campaign_decisions", table: "campaign_decisions" };

/** Every chain, in the order a transaction that appends to several takes their heads (last, in this order). */
export const CHAINED_TABLES: readonly ChainedTable[] = [CAMPAIGN_DECISIONS_CHAIN, RECONCILE_LOG_CHAIN];

/** The hash an entry carries, following `previous`. */
function linkHash(previous: string, canonical: string): string {
  return createHash("sha256").update(previous).update("\n").update(canonical, "utf8").digest("hex");
}

/**
 * A column's value in JSON: dates in ISO 8601, and the infinite timestamps PostgreSQL allows (read
 * by pg as ±Infinity, which JSON cannot hold) as strings, so that no entry can
 * fail to be chained after the platform call it records.
 */
function canonicalValue(value: unknown): unknown {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? "invalid date" : value.toISOString();
  if (typeof value === "number" && !Number.isFinite(value)) return String(value);
  return value;
}

/**
 * An entry's canonical bytes: its columns as read back from PostgreSQL (RFC 8785 JSON, dates in
 * ISO 8601), without `id` (the chain orders entries) and `chain_hash`. Null columns are left out, so
 * a nullable column added later leaves older entries' bytes as they were.
 */
export function canonicalRow(row: Record<string, unknown>): string {
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) {
    if (key === "id" || key === "chain_hash" || value === null || value === undefined) continue;
    fields[key] = canonicalValue(value);
  }
  return canonicalize(fields)!;
}

/**
 * Appends one entry to `chained`'s chain in the caller's transaction: locks the head, lets `insert`
 * write the entry (returning its id and canonical bytes), stores the entry's hash and moves the head.
 * The head stays locked until the transaction ends, so make the append the transaction's last
 * statement: a transaction holding a head never waits for another lock, and replicas cannot deadlock.
 */
export async function appendToChain(
  tx: Queryable,
  chained: ChainedTable,
  insert: () => Promise<{ id: string; canonical: string }>,
): Promise<string> {
  const [hash] = await appendAllToChain(tx, chained, async () => [await insert()]);
  return hash!;
}

/**
 * Appends the entries `insert` writes (in one statement or several) to `chained`'s chain, in id
 * order, as appendToChain does one: one lock of the head, one UPDATE of the hashes.
 */
export async function appendAllToChain(
  tx: Queryable,
  chained: ChainedTable,
  insert: () => Promise<{ id: string; canonical: string }[]>,
): Promise<string[]> {
  const [head] = await tx.query<{ head_hash: string }>(
    `SELECT head_hash FROM audit_chains WHERE name = $1 FOR UPDATE`,
    [chained.chain],
  );
  if (!head) throw new Error(`The audit chain ${chained.chain} has no head row (run the migrations).`);
  const entries = (await insert()).sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
  if (!entries.length) return [];
  let previous = head.head_hash;
  const hashes = entries.map((e) => (previous = linkHash(previous, e.canonical)));
  await tx.query(
    `WITH entry AS (UPDATE ${chained.table} t SET chain_hash = h.hash
                      FROM unnest($2::bigint[], $1::text[]) AS h(id, hash) WHERE t.id = h.id)
     UPDATE audit_chains SET head_id = $3, head_hash = $4 WHERE name = $5`,
    [hashes, entries.map((e) => e.id), entries.at(-1)!.id, hashes.at(-1), chained.chain],
  );
  return hashes;
}

type ChainHead = { chain: string; anchorId: string; anchorHash: string; headId: string; headHash: string };

async function readChainHead(db: Queryable, chained: ChainedTable): Promise<ChainHead | undefined> {
  const [row] = await db.query<{ anchor_id: string; anchor_hash: string; head_id: string; head_hash: string }>(
    `SELECT anchor_id, anchor_hash, head_id, head_hash FROM audit_chains WHERE name = $1`,
    [chained.chain],
  );
  return row
    ? {
        chain: chained.chain,
        anchorId: row.anchor_id,
        anchorHash: row.anchor_hash,
        headId: row.head_id,
        headHash: row.head_hash,
      }
    : undefined;
}

/**
 * Moves the anchor past entries about to be deleted from the chain's start (retention), in the
 * caller's transaction: the first entry kept then follows the hash of the last one deleted.
 */
export async function advanceChainAnchor(tx: Queryable, chained: ChainedTable, lastDeletedId: string): Promise<void> {
  await tx.query(
    `UPDATE audit_chains c SET anchor_id = e.id, anchor_hash = coalesce(e.chain_hash, c.anchor_hash)
       FROM (SELECT id, chain_hash FROM ${chained.table} WHERE id = $2) e
      WHERE c.name = $1 AND e.id > c.anchor_id`,
    [chained.chain, lastDeletedId],
  );
}

export type ChainVerdict =
  | {
      ok: true;
      chain: string;
      entries: number;
      headId: string;
      headHash: string;
      beforeChain: number;
      /** Of the hashes asked about (`lookFor`), those on this chain: at its anchor or one of its verified entries. */
      found: { hash: string; entryId: string }[];
    }
  | { ok: false; chain: string; entries: number; entryId: string | null; problem: string };

const BATCH = 2000;

/**
 * Re-computes every hash of the chain in id order; the first entry that does not match is named.
 * The anchor is not taken on trust: a chained entry at or below it (retention deletes those, and
 * only entries written before the chain carry no hash) fails the chain, since moving the anchor
 * past a changed entry would otherwise hide it. `lookFor` names hashes an evidence pack signed as
 * its head: each found on the chain is answered with its entry (a chain rewritten from the anchor
 * on verifies, but no longer holds the head a pack signed).
 */
export async function verifyChain(
  db: Queryable,
  chained: ChainedTable,
  lookFor: ReadonlySet<string> = new Set(),
): Promise<ChainVerdict> {
  const head = await readChainHead(db, chained);
  if (!head)
    return { ok: false, chain: chained.chain, entries: 0, entryId: null, problem: "the chain has no head row" };
  const [below = { n: 0, hashed: 0, first: null }] = await db.query<{
    n: number;
    hashed: number;
    first: string | null;
  }>(
    `SELECT count(*)::int AS n, count(chain_hash)::int AS hashed,
            min(id) FILTER (WHERE chain_hash IS NOT NULL)::text AS first
       FROM ${chained.table} WHERE id <= $1`,
    [head.anchorId],
  );
  let previousHash = head.anchorHash;
  let previousId = head.anchorId;
  let entries = 0;
  const found = lookFor.has(head.anchorHash) ? [{ hash: head.anchorHash, entryId: head.anchorId }] : [];
  const fail = (entryId: string | null, problem: string): ChainVerdict => ({
    ok: false,
    chain: chained.chain,
    entries,
    entryId,
    problem,
  });
  if (below.hashed > 0)
    return fail(
      below.first,
      `${below.hashed} chained entries lie at or below the anchor (entry ${head.anchorId}), the first entry ${below.first}: the anchor was moved past entries still present (retention deletes the entries it moves the anchor past), so they are not verified`,
    );
  for (;;) {
    const rows = await db.query<Record<string, unknown> & { id: string; chain_hash: string | null }>(
      `SELECT * FROM ${chained.table} WHERE id > $1 ORDER BY id LIMIT ${BATCH}`,
      [previousId],
    );
    for (const row of rows) {
      if (row.chain_hash === null)
        return fail(row.id, `entry ${row.id} has no chain hash: it was written outside the chain`);
      if (linkHash(previousHash, canonicalRow(row)) !== row.chain_hash)
        return fail(
          row.id,
          `entry ${row.id} does not match its hash: it was changed, or the entry before it (after ${previousId}) was removed or changed`,
        );
      if (lookFor.has(row.chain_hash)) found.push({ hash: row.chain_hash, entryId: row.id });
      previousHash = row.chain_hash;
      previousId = row.id;
      entries += 1;
    }
    if (rows.length < BATCH) break;
  }
  if (previousId !== head.headId || previousHash !== head.headHash)
    return fail(
      previousId,
      `the chain ends at entry ${previousId} but its head is entry ${head.headId}: entries after ${previousId} were removed`,
    );
  return {
    ok: true,
    chain: chained.chain,
    entries,
    headId: head.headId,
    headHash: head.headHash,
    beforeChain: below.n,
    found,
  };
}
