import type { Queryable } from "../database.js";
import { isUuid } from "../../ids.js";

/**
 * The reconcile queue read, not worked: its depth for the pages and metrics, the parked rows, one
 * user's row for `plan` and the user page, and the deprovisions the breaker counts. Nothing here
 * claims or changes a row; marking and the claim cycle are src/db/reconcile/queueRepository.ts.
 */

export type QueueDepth = {
  /** `settling`: grants waiting for the user to be quiet (not ready before `settle_until`). */
  byPriority: { priority: number | null; action: string | null; pending: number; ready: number; settling: number }[];
  parked: number;
  oldestEnqueuedAt: Date | null;
  /** When the next grant waiting to settle goes out (null when none waits). */
  nextSettleAt: Date | null;
  /** Stripped accounts whose DELETE waits for the grace to end (not in `byPriority`), and the next one due. */
  pendingDeletes: { count: number; nextAt: Date | null };
};

/** Rows other than a stripped account waiting for its grace to end (classified `await-delete`, not yet marked again). */
const NOT_PENDING_DELETE = `(action IS DISTINCT FROM 'await-delete' OR priority IS NULL)`;

export async function queueDepth(db: Queryable, now: Date): Promise<QueueDepth> {
  const rows: { priority: number | null; action: string | null; pending: number; ready: number; settling: number }[] =
    await db.query(
      `SELECT priority, action, count(*)::int AS pending, count(*) FILTER (WHERE not_before <= $1)::int AS ready,
            count(*) FILTER (WHERE settle_until > $1)::int AS settling
       FROM reconcile_queue WHERE parked_at IS NULL AND ${NOT_PENDING_DELETE}
      GROUP BY priority, action ORDER BY priority NULLS FIRST, action`,
      [now],
    );
  const meta: {
    parked: number;
    oldest: Date | null;
    next_settle: Date | null;
    deletes: number;
    next_delete: Date | null;
  }[] = await db.query(
    `SELECT count(*) FILTER (WHERE parked_at IS NOT NULL)::int AS parked,
            min(enqueued_at) FILTER (WHERE parked_at IS NULL AND ${NOT_PENDING_DELETE}) AS oldest,
            min(settle_until) FILTER (WHERE parked_at IS NULL AND settle_until > $1) AS next_settle,
            count(*) FILTER (WHERE parked_at IS NULL AND NOT ${NOT_PENDING_DELETE})::int AS deletes,
            min(not_before) FILTER (WHERE parked_at IS NULL AND NOT ${NOT_PENDING_DELETE}) AS next_delete
       FROM reconcile_queue`,
    [now],
  );
  return {
    byPriority: rows,
    parked: meta[0]?.parked ?? 0,
    oldestEnqueuedAt: meta[0]?.oldest ?? null,
    nextSettleAt: meta[0]?.next_settle ?? null,
    pendingDeletes: { count: meta[0]?.deletes ?? 0, nextAt: meta[0]?.next_delete ?? null },
  };
}

/** Parked queue rows (terminal failures kept for an admin) with the user's name when known. */
export async function listParkedWithNames(
  db: Queryable,
  limit: number,
): Promise<{ userId: string; userName: string | null; error: string | null; parkedAt: Date }[]> {
  const rows: { user_id: string; user_name: string | null; last_error: string | null; parked_at: Date }[] =
    await db.query(
      `SELECT q.user_id, COALESCE(u.user_name, a.user_name) AS user_name, q.last_error, q.parked_at
       FROM reconcile_queue q
       LEFT JOIN idp_users u ON u.id = q.user_id
       LEFT JOIN platform_accounts a ON a.user_id = q.user_id
      WHERE q.parked_at IS NOT NULL ORDER BY q.parked_at DESC LIMIT $1`,
      [limit],
    );
  return rows.map((r) => ({ userId: r.user_id, userName: r.user_name, error: r.last_error, parkedAt: r.parked_at }));
}

/** Whether the user has a queue row waiting (not parked). */
export async function isQueued(db: Queryable, userId: string): Promise<boolean> {
  if (!isUuid(userId)) return false;
  const rows: unknown[] = await db.query(`SELECT 1 FROM reconcile_queue WHERE user_id = $1 AND parked_at IS NULL`, [
    userId,
  ]);
  return rows.length > 0;
}

/**
 * Deprovisions classified and waiting, and deletes whose grace has ended by `now` (the breaker
 * counts them: a wave of strips comes due at once when its grace ends). `priority` is the one the
 * planner gives a deprovision (src/reconcile/planner.ts `PRIORITY.deprovision`).
 */
export async function countPendingDeprovisions(db: Queryable, now: Date, priority: number): Promise<number> {
  const rows: { n: number }[] = await db.query(
    `SELECT count(*)::int AS n FROM reconcile_queue
      WHERE priority = $2 AND parked_at IS NULL AND (action = 'deprovision' OR (action = 'await-delete' AND not_before <= $1))`,
    [now, priority],
  );
  return rows[0]?.n ?? 0;
}

/** A user's queue row as `plan` and the user page show it: waiting to settle, deferred, parked or ready. */
export type QueueEntry = {
  priority: number | null;
  action: string | null;
  notBefore: Date;
  settleUntil: Date | null;
  parkedAt: Date | null;
  claimed: boolean;
};

export async function getQueueEntry(db: Queryable, userId: string): Promise<QueueEntry | undefined> {
  const rows: {
    priority: number | null;
    action: string | null;
    not_before: Date;
    settle_until: Date | null;
    parked_at: Date | null;
    claimed: boolean;
  }[] = await db.query(
    `SELECT priority, action, not_before, settle_until, parked_at, claimed_by IS NOT NULL AS claimed FROM reconcile_queue WHERE user_id = $1`,
    [userId],
  );
  const r = rows[0];
  return (
    r && {
      priority: r.priority,
      action: r.action,
      notBefore: r.not_before,
      settleUntil: r.settle_until,
      parkedAt: r.parked_at,
      claimed: r.claimed,
    }
  );
}

/**
 * Whether the reconcile queue has work due now (grants, reductions, verification; unclassified rows
 * too): the lowest lane (looking up accounts made by hand) spends only when nothing is. Rows waiting
 * to settle, deferred for budget, waiting for a grace to end, or parked are not due.
 */
export async function hasDueWork(db: Queryable, now: Date): Promise<boolean> {
  const rows: unknown[] = await db.query(
    `SELECT 1 FROM reconcile_queue WHERE parked_at IS NULL AND not_before <= $1 LIMIT 1`,
    [now],
  );
  return rows.length > 0;
}
