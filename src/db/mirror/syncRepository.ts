import type { Database, Queryable } from "../database.js";

/**
 * The mirror sync's bookkeeping in `mirror_sync.pending` (filled by triggers on the mirror
 * tables; see the migration). Workers never wait on a row lock here: claims and settlements use
 * SKIP LOCKED, because the ETL's transactions lock pending rows in their own order and a wait
 * could deadlock with them (and the loser might be the customer's ETL).
 */

export type MirrorKind = "email" | "subscription_group" | "preference_center";

export type ClaimedRow = {
  key: string;
  batchKey: string;
  version: string;
  payload: unknown;
  /** Database-clock ages: of this key's latest change, and of its oldest change not yet pushed. */
  changedAgeMs: number;
  firstChangedAgeMs: number;
};

export type ClaimOptions = {
  kind: MirrorKind;
  claimId: string;
  limit: number;
  now: Date;
  leaseMs: number;
  /** Round-robin cursor: start at this batch key (inclusive) so a busy key cannot starve the rest. */
  fromBatchKey?: string;
  /** Only this batch key (a preference center's workspace). */
  batchKey?: string;
};

/**
 * Claims up to `limit` ready changes, ordered by batch key then age, and returns them in that
 * order. A claim is a lease: if the worker dies, `claimed_until` passes and another takes over.
 */
export async function claimPendingChanges(db: Database, o: ClaimOptions): Promise<ClaimedRow[]> {
  const rows: {
    key: string;
    batch_key: string;
    version: string;
    payload: unknown;
    changed_age_ms: number;
    first_age_ms: number;
  }[] = await db.query(
    `WITH picked AS (
       SELECT key FROM mirror_sync.pending
        WHERE kind = $1 AND parked_at IS NULL AND (claimed_until IS NULL OR claimed_until < $2)
          AND batch_key >= $3 AND ($7::text IS NULL OR batch_key = $7)
        ORDER BY batch_key, version
        LIMIT $4
        FOR UPDATE SKIP LOCKED),
     -- Primary-key probes, not a hash join over the whole table (which the planner prefers).
     claimed AS (
       UPDATE mirror_sync.pending p
          SET claim_id = $5, claimed_until = $2::timestamptz + $6 * interval '1 millisecond', attempts = p.attempts + 1
        WHERE p.kind = $1 AND p.key = ANY(ARRAY(SELECT key FROM picked))
       RETURNING p.key, p.batch_key, p.version, p.payload, p.changed_at, p.first_changed_at)
     SELECT key, batch_key, version::text AS version, payload,
            (extract(epoch FROM now() - changed_at) * 1000)::float8 AS changed_age_ms,
            (extract(epoch FROM now() - first_changed_at) * 1000)::float8 AS first_age_ms
       FROM claimed ORDER BY batch_key, version`,
    [o.kind, o.now, o.fromBatchKey ?? "", o.limit, o.claimId, o.leaseMs, o.batchKey ?? null],
  );
  return rows.map((r) => ({
    key: r.key,
    batchKey: r.batch_key,
    version: r.version,
    payload: r.payload,
    changedAgeMs: r.changed_age_ms,
    firstChangedAgeMs: r.first_age_ms,
  }));
}

export type Settlement =
  | { key: string; version: string; outcome: "ack" }
  | { key: string; version: string; outcome: "park"; reason: string }
  | { key: string; version: string; outcome: "release"; reason?: string };

/**
 * Records what happened to claimed changes. An ack deletes the key only if its version is still
 * the one pushed; a newer change (committed while the push was in flight) is released instead, so
 * it goes out next. A park likewise applies only to the version the platform refused. Returns the
 * settlements that could not be applied because the row was locked (an ETL transaction is writing
 * it right now) and is still claimed by us: the caller retries them shortly.
 */
export async function settleClaimedChanges(
  db: Queryable,
  kind: MirrorKind,
  claimId: string,
  settlements: readonly Settlement[],
  now: Date,
): Promise<Settlement[]> {
  if (!settlements.length) return [];
  // One primary-key probe per input key (the LATERAL forces it: left to itself the planner scans
  // every pending row of the kind, or, filtering by claim id, which it expects to match one row,
  // loops claims × input: seconds per batch). What to do with each key comes in a jsonb map.
  const plan: Record<string, [string, string, string | null]> = {};
  for (const s of settlements) plan[s.key] = [s.version, s.outcome, "reason" in s ? (s.reason ?? null) : null];
  const done: { key: string }[] = await db.query(
    `WITH locked AS (
       SELECT p.key, ($4::jsonb -> p.key ->> 0)::bigint = p.version AS current,
              $4::jsonb -> p.key ->> 1 AS outcome, $4::jsonb -> p.key ->> 2 AS reason
         FROM unnest($3::text[]) AS k(key)
        CROSS JOIN LATERAL (
              SELECT key, version FROM mirror_sync.pending
               WHERE kind = $1 AND key = k.key AND claim_id = $2
                 FOR UPDATE SKIP LOCKED) p),
     deleted AS (
       DELETE FROM mirror_sync.pending p
        WHERE p.kind = $1 AND p.key IN (SELECT key FROM locked WHERE current AND outcome = 'ack')
       RETURNING p.key),
     updated AS (
       UPDATE mirror_sync.pending p
          SET claim_id = NULL, claimed_until = NULL,
              parked_at = CASE WHEN l.current AND l.outcome = 'park' THEN $5::timestamptz END,
              park_reason = CASE WHEN l.current AND l.outcome = 'park' THEN l.reason END,
              last_error = CASE WHEN l.outcome = 'release' THEN l.reason ELSE p.last_error END
         FROM locked l
        WHERE p.kind = $1 AND p.key = l.key AND NOT (l.current AND l.outcome = 'ack')
       RETURNING p.key)
     SELECT key FROM deleted UNION ALL SELECT key FROM updated`,
    [kind, claimId, Object.keys(plan), JSON.stringify(plan), now],
  );
  if (done.length === settlements.length) return [];
  const handled = new Set(done.map((r) => r.key));
  const rest = settlements.filter((s) => !handled.has(s.key));
  // Rows gone or claimed by someone else since (our lease ran out) are no longer ours to settle.
  const stillOurs: { key: string }[] = await db.query(
    `SELECT key FROM mirror_sync.pending WHERE kind = $1 AND claim_id = $2 AND key = ANY($3::text[])`,
    [kind, claimId, rest.map((s) => s.key)],
  );
  const ours = new Set(stillOurs.map((r) => r.key));
  return rest.filter((s) => ours.has(s.key));
}

/** The workspaces (batch keys) of preference centers ready to push. */
export async function readyPreferenceCenterWorkspaces(db: Database, now: Date): Promise<string[]> {
  const rows: { batch_key: string }[] = await db.query(
    `SELECT DISTINCT batch_key FROM mirror_sync.pending
      WHERE kind = 'preference_center' AND parked_at IS NULL AND (claimed_until IS NULL OR claimed_until < $1)
      ORDER BY batch_key`,
    [now],
  );
  return rows.map((r) => r.batch_key);
}

export type PaceDecision = { granted: true } | { granted: false; nextAt: Date };

/**
 * Takes one send slot of a sliding-window pace shared by every replica (a transaction-scoped
 * advisory lock serialises takers of one scope). Taken before each attempt is sent, like a
 * budget debit: a request that fails still counted at the platform.
 */
export async function takePaceSlot(
  db: Database,
  scope: string,
  now: Date,
  limit: number,
  windowMs: number,
): Promise<PaceDecision> {
  return db.transaction(async (m) => {
    await m.query(`SELECT pg_advisory_xact_lock(hashtext('mirror_pace'), hashtext($1))`, [scope]);
    const since = new Date(now.getTime() - windowMs);
    await m.query(`DELETE FROM mirror_sync.pace_slots WHERE scope = $1 AND sent_at <= $2`, [scope, since]);
    const [row]: { used: number; oldest: Date | null }[] = await m.query(
      `SELECT count(*)::int AS used, min(sent_at) AS oldest FROM mirror_sync.pace_slots WHERE scope = $1`,
      [scope],
    );
    if (row.used >= limit)
      return { granted: false as const, nextAt: new Date(new Date(row.oldest!).getTime() + windowMs) };
    await m.query(`INSERT INTO mirror_sync.pace_slots (scope, sent_at) VALUES ($1, $2)`, [scope, now]);
    return { granted: true as const };
  });
}

export type PushLogEntry = {
  kind: MirrorKind;
  endpoint: string;
  workspace?: string;
  changes: number;
  outcome: "ok" | "rejected" | "retry" | "rate_limited";
  status?: number;
  detail?: string;
};

export async function recordPushes(db: Database, entries: readonly PushLogEntry[], at: Date): Promise<void> {
  if (!entries.length) return;
  await db.query(
    `INSERT INTO mirror_sync.push_log (at, kind, endpoint, workspace, changes, outcome, status, detail)
     SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::int[], $6::text[], $7::int[], $8::text[])`,
    [
      at,
      entries.map((e) => e.kind),
      entries.map((e) => e.endpoint),
      entries.map((e) => e.workspace ?? null),
      entries.map((e) => e.changes),
      entries.map((e) => e.outcome),
      entries.map((e) => e.status ?? null),
      entries.map((e) => e.detail ?? null),
    ],
  );
}

export async function prunePushLog(db: Database, before: Date): Promise<number> {
  return db.execute(`DELETE FROM mirror_sync.push_log WHERE at < $1`, [before]);
}
