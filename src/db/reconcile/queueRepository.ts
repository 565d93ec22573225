import type { Queryable } from "../database.js";
import type { DirtyTrigger, PlatformTrigger } from "../../vocabulary/reconcile.js";
import { roundsByKey } from "../sql.js";

/**
 * The reconcile queue, one row per dirty user: marking (in the transaction of the change that
 * caused it) and the workers' cycle over a row: classify, claim, then complete, requeue, defer,
 * park or release. What the pages, the CLI and the breaker read is src/db/reconcile/queueReads.ts.
 */

/**
 * How urgent a mark's source is: a lower rank is claimed first (IdP, admin and a change made on the
 * platform behind the connector's back over mapping over resync).
 */
const SOURCE_RANK: Record<DirtyTrigger["kind"], number> = { idp: 0, admin: 0, platform: 0, mapping: 1, resync: 2 };

/**
 * Marks users dirty inside the caller's transaction, so the mark commits (or not) with the IdP
 * change that caused it. Coalesced: one row per user; a new mark bumps the generation, clears
 * the classification and any backoff, and keeps the earliest enqueue time. A mark from a more
 * urgent source (IdP over mapping over resync) lowers the row's source rank; never raises it.
 *
 * Generations start at the mark's time in microseconds (not at 1), so a row that was dropped and
 * marked again never repeats a generation an older reader still holds: a loop that classified the
 * old row as "nothing to do" cannot delete the new mark (dropIfUnchanged matches on generation).
 */
export async function markUsersDirty(
  manager: Queryable,
  userIds: readonly string[],
  trigger: DirtyTrigger,
): Promise<void> {
  const ids = [...new Set(userIds)];
  if (!ids.length) return;
  // The NOTIFY is delivered at commit and wakes idle workers on every replica; one statement, one round trip.
  await manager.query(`WITH ${markDirtyCtes("$1::uuid[]", "$2::jsonb", "$3")} SELECT 1 FROM notified`, [
    ids,
    ...markDirtyParams(trigger),
  ]);
}

/**
 * Marks several users in one statement, each with its own trigger (a group write: the members it
 * added, removed, and kept through a rename). One statement takes the queue rows' locks in user
 * order, so two writes that touch crossed sets of users queue behind each other; marking the added
 * and then the removed in two statements took them in two orders, and PostgreSQL killed one of two
 * such writes as a deadlock (test/scim/groupLockOrder.test.ts). A user named twice keeps the last
 * mark, as two marks in a row would leave the row. The marks share a source (one rank).
 */
export async function markUsersDirtyEach(
  manager: Queryable,
  marks: readonly { userId: string; trigger: DirtyTrigger }[],
): Promise<void> {
  const last = new Map(marks.map((m) => [m.userId, m.trigger]));
  if (!last.size) return;
  const kinds = new Set(marks.map((m) => m.trigger.kind));
  if (kinds.size > 1) throw new Error(`markUsersDirtyEach takes marks of one source, not ${[...kinds].join(" and ")}`);
  const unique = [...last].map(([userId, trigger]) => ({ userId, trigger }));
  await markEachOnce(manager, unique, SOURCE_RANK[marks[0]!.trigger.kind], false);
}

/** One statement marking each user (named once) with its own trigger, all of one source rank. */
async function markEachOnce(
  db: Queryable,
  marks: readonly { userId: string; trigger: DirtyTrigger }[],
  rank: number,
  platformCheck: boolean,
): Promise<void> {
  const cte = markDirtyCtes("$1::uuid[]", "m.trigger::jsonb", "$3", { platformCheck, triggers: "$2::text[]" });
  await db.query(`WITH ${cte} SELECT 1 FROM notified`, [
    marks.map((m) => m.userId),
    marks.map((m) => JSON.stringify(m.trigger)),
    rank,
  ]);
}

/**
 * The marking of markUsersDirty as two CTEs, `marked` and `notified`, for a write that stores a
 * change and marks its users in one statement (an IdP write is then one round trip). `ids` is a
 * SQL expression of type uuid[], `trigger` one of type jsonb and `rank` the source rank (the values
 * of markDirtyParams, as parameters). The statement must read from `notified` for the NOTIFY to run.
 * `triggers` (text[], beside `ids`): a trigger per user, read by `trigger` as `m.trigger`.
 */
export function markDirtyCtes(
  ids: string,
  trigger: string,
  rank: string,
  options: { platformCheck?: boolean; triggers?: string } = {},
): string {
  const check = options.platformCheck
    ? { column: ", platform_check", value: ", true", set: "platform_check = true," }
    : undefined;
  const rows = options.triggers ? `unnest(${ids}, ${options.triggers}) AS m(id, trigger)` : `unnest(${ids}) AS id`;
  return `marked AS (
     INSERT INTO reconcile_queue (user_id, trigger, source_rank, generation${check?.column ?? ""})
       SELECT id, ${trigger}, ${rank}, (extract(epoch FROM clock_timestamp()) * 1000000)::bigint${check?.value ?? ""} FROM ${rows} ORDER BY id
     ON CONFLICT (user_id) DO UPDATE SET ${check?.set ?? ""}
       generation = GREATEST(reconcile_queue.generation + 1, EXCLUDED.generation),
       priority = NULL,
       trigger = CASE WHEN EXCLUDED.source_rank <= reconcile_queue.source_rank THEN EXCLUDED.trigger ELSE reconcile_queue.trigger END,
       source_rank = LEAST(reconcile_queue.source_rank, EXCLUDED.source_rank),
       marked_at = now(),
       not_before = '-infinity',
       settle_until = NULL,
       attempts = 0,
       last_error = NULL,
       parked_at = NULL
     RETURNING 1),
   notified AS (SELECT pg_notify('reconcile_queue', '') WHERE EXISTS (SELECT 1 FROM marked))`;
}

export function markDirtyParams(trigger: DirtyTrigger): [string, number] {
  return [JSON.stringify(trigger), SOURCE_RANK[trigger.kind]];
}

/**
 * Marks users dirty and asks for each account to be read on the platform first (`platform_check`):
 * the platform's record says someone else changed it there. Kept across later marks until the
 * reconciler has read the account (clearPlatformCheck). One statement for many users, each with its
 * own event's trigger; a user named twice is marked twice, in order (roundsByKey).
 */
export async function markPlatformChecks(
  db: Queryable,
  marks: readonly { userId: string; trigger: PlatformTrigger }[],
): Promise<void> {
  for (const round of roundsByKey(marks, (m) => m.userId)) await markEachOnce(db, round, SOURCE_RANK.platform, true);
}

export async function clearPlatformCheck(db: Queryable, userId: string): Promise<void> {
  await db.query(`UPDATE reconcile_queue SET platform_check = false WHERE user_id = $1 AND platform_check`, [userId]);
}

export type QueueRow = {
  userId: string;
  generation: number;
  priority: number | null;
  trigger: DirtyTrigger;
  attempts: number;
  /**
   * When the work this row holds was first queued: its enqueue time, or for a row a full resync
   * queued (enqueued at -infinity, to order by when each account was last verified) the time it
   * was last marked.
   */
  queuedAt: Date;
  /** A full resync asked for this user's account to be checked against the platform. */
  verifyRun: string | null;
  /** The platform's record says the account was changed there by someone else: read it first (markPlatformCheck). */
  platformCheck: boolean;
  /** When the current burst of grants was first held to settle (null: none held). */
  burstStartedAt: Date | null;
};

type Row = {
  user_id: string;
  generation: string;
  priority: number | null;
  trigger: DirtyTrigger;
  attempts: number;
  queued_at: Date;
  verify_run: string | null;
  platform_check: boolean;
  burst_started_at: Date | null;
};
const mapRow = (r: Row): QueueRow => ({
  userId: r.user_id,
  generation: Number(r.generation),
  priority: r.priority,
  trigger: r.trigger,
  attempts: r.attempts,
  queuedAt: r.queued_at,
  verifyRun: r.verify_run,
  platformCheck: r.platform_check,
  burstStartedAt: r.burst_started_at,
});

const COLUMNS = `user_id, generation, priority, trigger, attempts,
  CASE WHEN enqueued_at = '-infinity' THEN marked_at ELSE enqueued_at END AS queued_at, verify_run, platform_check, burst_started_at`;

/**
 * Workers hold a session-level advisory lock (WORKER_LOCK_CLASS, workerId) for as long as they
 * live. A claim made by a worker whose lock is gone (the process died, its connection dropped)
 * is void, so work is never stuck behind a dead replica and never waits for a lease to expire.
 */
export const WORKER_LOCK_CLASS = 4242;

const CLAIMABLE = `(claimed_by IS NULL OR claimed_by NOT IN (
    SELECT objid::int FROM pg_locks
     WHERE locktype = 'advisory' AND classid = ${WORKER_LOCK_CLASS} AND objsubid = 2 AND granted
       AND database = (SELECT oid FROM pg_database WHERE datname = current_database())))`;

/** Rows not yet classified by the planner (and not being worked). */
export async function listUnclassified(db: Queryable, limit: number): Promise<QueueRow[]> {
  const rows: Row[] = await db.query(
    `SELECT ${COLUMNS} FROM reconcile_queue
      WHERE priority IS NULL AND parked_at IS NULL AND ${CLAIMABLE} ORDER BY source_rank, enqueued_at LIMIT $1`,
    [limit],
  );
  return rows.map(mapRow);
}

/**
 * Sets the planner's priority, unless the row was marked again meanwhile (then it is classified
 * anew). With `settle`, the row is a grant held until `until` (the settle window): not claimable
 * before then, and the burst's start is kept to cap the wait.
 */
export async function setPriority(
  db: Queryable,
  row: QueueRow,
  priority: number,
  action: string,
  options: { settle?: { until: Date; burstStartedAt: Date }; notBefore?: Date } = {},
): Promise<void> {
  const { settle, notBefore } = options;
  await db.query(
    `UPDATE reconcile_queue SET priority = $3, action = $4,
        settle_until = $5,
        not_before = GREATEST(not_before, COALESCE($5, '-infinity'::timestamptz), COALESCE($7, '-infinity'::timestamptz)),
        burst_started_at = CASE WHEN $5::timestamptz IS NULL THEN burst_started_at ELSE COALESCE(burst_started_at, $6) END
      WHERE user_id = $1 AND generation = $2 AND priority IS NULL`,
    [
      row.userId,
      row.generation,
      priority,
      action,
      settle?.until ?? null,
      settle?.burstStartedAt ?? null,
      notBefore ?? null,
    ],
  );
}

/**
 * Drops a row that needs no work, unless it was marked again meanwhile or a live worker holds it.
 * A claim whose worker died is void here as everywhere: such a row, marked again after the claim,
 * is listed as unclassified, and skipping it would list it again on every pass, never drained.
 */
export async function dropIfUnchanged(db: Queryable, row: QueueRow): Promise<void> {
  await db.query(`DELETE FROM reconcile_queue WHERE user_id = $1 AND generation = $2 AND ${CLAIMABLE}`, [
    row.userId,
    row.generation,
  ]);
}

/**
 * Claims the most urgent ready row at or below `maxPriority` for `workerId`. The row lock is held
 * only for this statement: a reconcile in flight never blocks the IdP's writes to the queue.
 */
export async function claimNext(
  db: Queryable,
  workerId: number,
  now: Date,
  maxPriority: number,
): Promise<QueueRow | undefined> {
  const rows = await db.query<Row>(
    `UPDATE reconcile_queue SET claimed_by = $1, claimed_at = $2
      WHERE user_id = (
        SELECT user_id FROM reconcile_queue
         WHERE priority IS NOT NULL AND priority <= $3 AND parked_at IS NULL AND not_before <= $2 AND ${CLAIMABLE}
         ORDER BY priority, source_rank, enqueued_at LIMIT 1 FOR UPDATE SKIP LOCKED)
      RETURNING ${COLUMNS}`,
    [workerId, now, maxPriority],
  );
  return rows[0] ? mapRow(rows[0]) : undefined;
}

/** Claims one specific user's row (provision on demand), if nobody else is working it. */
export async function claimUser(
  db: Queryable,
  workerId: number,
  userId: string,
  now: Date,
): Promise<QueueRow | undefined> {
  const rows = await db.query<Row>(
    `UPDATE reconcile_queue SET claimed_by = $1, claimed_at = $2
      WHERE user_id = (SELECT user_id FROM reconcile_queue WHERE user_id = $3 AND ${CLAIMABLE} FOR UPDATE SKIP LOCKED)
      RETURNING ${COLUMNS}`,
    [workerId, now, userId],
  );
  return rows[0] ? mapRow(rows[0]) : undefined;
}

/**
 * Finishes a claimed row: removed when nothing marked it since it was claimed; otherwise released
 * and sent back for classification, since the user changed while we worked.
 */
export async function completeQueueRow(db: Queryable, row: QueueRow): Promise<boolean> {
  const rows = await db.query(`DELETE FROM reconcile_queue WHERE user_id = $1 AND generation = $2 RETURNING user_id`, [
    row.userId,
    row.generation,
  ]);
  if (!rows.length) {
    // What was applied ends the burst: the changes that came meanwhile are a new one.
    await db.query(
      `UPDATE reconcile_queue SET claimed_by = NULL, claimed_at = NULL, priority = NULL, settle_until = NULL, burst_started_at = NULL WHERE user_id = $1`,
      [row.userId],
    );
  }
  return rows.length > 0;
}

/**
 * Keeps a claimed row for later (a stripped account's delete after the grace): not claimable
 * before `at`, filed as `action`. False when the user was marked again meanwhile (the row is then
 * classified anew, and the caller releases it).
 */
export async function requeueQueueRow(db: Queryable, row: QueueRow, at: Date, action: string): Promise<boolean> {
  const rows = await db.query(
    `UPDATE reconcile_queue SET not_before = $3, action = $4, claimed_by = NULL, claimed_at = NULL, settle_until = NULL,
        burst_started_at = NULL, attempts = 0, last_error = NULL
      WHERE user_id = $1 AND generation = $2 RETURNING user_id`,
    [row.userId, row.generation, at, action],
  );
  return rows.length > 0;
}

/** Gives back a claim this worker could not finish (a statement failed); any worker may take the row again. */
export async function releaseClaim(db: Queryable, userId: string, workerId: number): Promise<void> {
  await db.query(
    `UPDATE reconcile_queue SET claimed_by = NULL, claimed_at = NULL WHERE user_id = $1 AND claimed_by = $2`,
    [userId, workerId],
  );
}

/** Come back after `notBefore`; counts an attempt when the reason was a failure. */
export async function deferQueueRow(
  tx: Queryable,
  userId: string,
  notBefore: Date,
  failure?: { error: string },
): Promise<void> {
  await tx.query(
    `UPDATE reconcile_queue SET not_before = $2, claimed_by = NULL, claimed_at = NULL, settle_until = NULL,
        attempts = attempts + CASE WHEN $3::text IS NULL THEN 0 ELSE 1 END,
        last_error = COALESCE($3, last_error)
      WHERE user_id = $1`,
    [userId, notBefore, failure?.error ?? null],
  );
}

/** A terminal failure: kept, visible, not retried until the user changes again or an admin retries. */
export async function parkQueueRow(tx: Queryable, userId: string, error: string, at: Date): Promise<void> {
  await tx.query(
    `UPDATE reconcile_queue SET parked_at = $3, last_error = $2, attempts = attempts + 1, claimed_by = NULL, claimed_at = NULL WHERE user_id = $1`,
    [userId, error, at],
  );
}

/**
 * What the queue holds for the old platform (`platform forget`): its queued verifications are
 * dropped, and a held-legacy grant is released, since the new platform has refused nothing yet.
 */
export async function releaseOldPlatformWork(tx: Queryable): Promise<void> {
  await tx.query(`UPDATE reconcile_queue SET verify_run = NULL WHERE verify_run IS NOT NULL`);
  await tx.query(`UPDATE reconcile_queue SET not_before = '-infinity' WHERE action = 'held-legacy'`);
}
