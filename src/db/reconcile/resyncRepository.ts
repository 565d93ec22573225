import type { Queryable } from "../database.js";

/** Full-resync runs, their progress, and the cron slots that make a schedule fire once. */

export type RunStatus = "running" | "succeeded" | "failed";
export type RunPhase = "plan" | "verify" | "done";

export type ResyncRun = {
  id: string;
  status: RunStatus;
  phase: RunPhase;
  dryRun: boolean;
  verify: boolean;
  trigger: string;
  actor: string | null;
  startedAt: Date;
  finishedAt: Date | null;
  cursor: string | null;
  orphanCursor: string | null;
  usersTotal: number;
  usersEvaluated: number;
  usersQueued: number;
  verifyTotal: number;
  verified: number;
  drifted: number;
  callsSpent: number;
  planSummary: Record<string, number>;
  error: string | null;
};

type Row = {
  id: string;
  status: RunStatus;
  phase: RunPhase;
  dry_run: boolean;
  verify: boolean;
  trigger: string;
  actor: string | null;
  started_at: Date;
  finished_at: Date | null;
  cursor: string | null;
  orphan_cursor: string | null;
  users_total: number;
  users_evaluated: number;
  users_queued: number;
  verify_total: number;
  verified: number;
  drifted: number;
  calls_spent: number;
  plan_summary: Record<string, number>;
  error: string | null;
};

const mapRun = (r: Row): ResyncRun => ({
  id: r.id,
  status: r.status,
  phase: r.phase,
  dryRun: r.dry_run,
  verify: r.verify,
  trigger: r.trigger,
  actor: r.actor,
  startedAt: r.started_at,
  finishedAt: r.finished_at,
  cursor: r.cursor,
  orphanCursor: r.orphan_cursor,
  usersTotal: r.users_total,
  usersEvaluated: r.users_evaluated,
  usersQueued: r.users_queued,
  verifyTotal: r.verify_total,
  verified: r.verified,
  drifted: r.drifted,
  callsSpent: Number(r.calls_spent),
  planSummary: r.plan_summary,
  error: r.error,
});

const SELECT = `SELECT r.*, (SELECT count(*) FROM budget_debits d WHERE d.run_id = r.id)::int AS calls_spent FROM resync_runs r`;

export async function insertRun(
  db: Queryable,
  run: {
    id: string;
    dryRun: boolean;
    verify: boolean;
    trigger: string;
    actor: string | null;
    startedAt: Date;
    owner: string;
    usersTotal: number;
  },
): Promise<void> {
  await db.query(
    `INSERT INTO resync_runs (id, status, phase, dry_run, verify, trigger, actor, started_at, owner, heartbeat_at, users_total)
     VALUES ($1, 'running', 'plan', $2, $3, $4, $5, $6, $7, now(), $8)`,
    [run.id, run.dryRun, run.verify, run.trigger, run.actor, run.startedAt, run.owner, run.usersTotal],
  );
}

export async function getRun(db: Queryable, id: string): Promise<ResyncRun | undefined> {
  if (!/^[0-9a-f-]{36}$/i.test(id)) return undefined;
  const rows: Row[] = await db.query(`${SELECT} WHERE r.id = $1`, [id]);
  return rows[0] ? mapRun(rows[0]) : undefined;
}

export async function listRuns(db: Queryable, limit: number): Promise<ResyncRun[]> {
  const rows: Row[] = await db.query(`${SELECT} ORDER BY r.started_at DESC LIMIT $1`, [limit]);
  return rows.map(mapRun);
}

/** The live (not dry) run in progress, if any; at most one exists. */
export async function getRunningRun(db: Queryable): Promise<ResyncRun | undefined> {
  const rows: Row[] = await db.query(`${SELECT} WHERE r.status = 'running' AND NOT r.dry_run`);
  return rows[0] ? mapRun(rows[0]) : undefined;
}

/** Records phase-1 progress (and that its owner is alive). */
export async function savePlanProgress(
  db: Queryable,
  id: string,
  progress: {
    cursor: string | null;
    orphanCursor: string | null;
    evaluated: number;
    queued: number;
    summary: Record<string, number>;
  },
): Promise<void> {
  await db.query(
    `UPDATE resync_runs SET cursor = $2, orphan_cursor = $3, users_evaluated = users_evaluated + $4, users_queued = users_queued + $5,
        plan_summary = $6, heartbeat_at = now() WHERE id = $1`,
    [id, progress.cursor, progress.orphanCursor, progress.evaluated, progress.queued, JSON.stringify(progress.summary)],
  );
}

export async function setRunPhase(
  db: Queryable,
  id: string,
  phase: RunPhase,
  fields: { verifyTotal?: number; status?: RunStatus; finishedAt?: Date; error?: string } = {},
): Promise<void> {
  await db.query(
    `UPDATE resync_runs SET phase = $2, verify_total = COALESCE($3, verify_total), status = COALESCE($4, status),
        finished_at = COALESCE($5, finished_at), error = COALESCE($6, error), heartbeat_at = now() WHERE id = $1`,
    [id, phase, fields.verifyTotal ?? null, fields.status ?? null, fields.finishedAt ?? null, fields.error ?? null],
  );
}

/**
 * One account verified: counted on its run and taken off the queue's verification list in one
 * statement, so whoever sees the list empty also sees every count (finishVerifiedRun relies on it).
 */
export async function countVerified(
  db: Queryable,
  id: string,
  userId: string,
  outcome: { drifted: boolean },
): Promise<void> {
  await db.query(
    `WITH counted AS (UPDATE resync_runs SET verified = verified + 1, drifted = drifted + $2 WHERE id = $1)
     UPDATE reconcile_queue SET verify_run = NULL WHERE user_id = $3`,
    [id, outcome.drifted ? 1 : 0, userId],
  );
}

/**
 * Closes a verifying run once no verification of it is left, returning its final counts; undefined
 * while some are pending (or when another replica closed it first). The counts are read by the
 * statement that closes the run, never from an earlier read that a last verification could overtake.
 */
export async function finishVerifiedRun(
  db: Queryable,
  id: string,
  finishedAt: Date,
): Promise<{ id: string; verified: number; drifted: number; startedAt: Date } | undefined> {
  const rows: { verified: number; drifted: number; started_at: Date }[] = await db.query(
    `UPDATE resync_runs SET phase = 'done', status = 'succeeded', finished_at = $2, heartbeat_at = now()
      WHERE id = $1 AND phase = 'verify' AND NOT EXISTS (SELECT 1 FROM reconcile_queue WHERE verify_run = $1)
      RETURNING verified, drifted, started_at`,
    [id, finishedAt],
  );
  const row = rows[0];
  return row && { id, verified: row.verified, drifted: row.drifted, startedAt: row.started_at };
}

/** Takes over a live run whose phase-1 owner stopped reporting (a crashed replica); true when taken. */
export async function takeOverStaleRun(
  db: Queryable,
  id: string,
  owner: string,
  staleAfterMs: number,
): Promise<boolean> {
  const rows = await db.query(
    `UPDATE resync_runs SET owner = $2, heartbeat_at = now()
        WHERE id = $1 AND status = 'running' AND phase = 'plan' AND (heartbeat_at IS NULL OR heartbeat_at < now() - make_interval(secs => $3))
        RETURNING id`,
    [id, owner, staleAfterMs / 1000],
  );
  return rows.length > 0;
}

/** Verification rows of a run still waiting in the queue. */
export async function countPendingVerifications(db: Queryable, runId: string): Promise<number> {
  const rows: { n: number }[] = await db.query(`SELECT count(*)::int AS n FROM reconcile_queue WHERE verify_run = $1`, [
    runId,
  ]);
  return rows[0]?.n ?? 0;
}

/** Claims a cron slot: true for exactly one replica per slot. */
export async function claimScheduleSlot(db: Queryable, slot: Date): Promise<boolean> {
  const rows: unknown[] = await db.query(
    `INSERT INTO resync_schedule (slot) VALUES ($1) ON CONFLICT (slot) DO NOTHING RETURNING slot`,
    [slot],
  );
  return rows.length > 0;
}

export async function setScheduleRun(db: Queryable, slot: Date, runId: string): Promise<void> {
  await db.query(`UPDATE resync_schedule SET run_id = $2 WHERE slot = $1`, [slot, runId]);
}

export async function lastScheduleSlot(db: Queryable): Promise<Date | undefined> {
  const rows: { slot: Date }[] = await db.query(`SELECT max(slot) AS slot FROM resync_schedule`);
  return rows[0]?.slot ?? undefined;
}

/**
 * Files a verification request for these users' accounts under `runId`: as a queue row at
 * verification priority, ordered by when each was last verified (never verified first). A user
 * already queued for a change keeps its place and gets the request attached.
 */
export async function queueVerifications(db: Queryable, runId: string, userIds: string[]): Promise<number> {
  if (!userIds.length) return 0;
  const rows = await db.query(
    `INSERT INTO reconcile_queue (user_id, trigger, source_rank, priority, action, enqueued_at, verify_run)
         SELECT a.user_id, $2::jsonb, 2, 4, 'verify', COALESCE(a.last_verified_at, '-infinity'), $1
           FROM platform_accounts a WHERE a.user_id = ANY($3::uuid[]) AND a.platform_id IS NOT NULL
         ORDER BY a.user_id
       ON CONFLICT (user_id) DO UPDATE SET verify_run = EXCLUDED.verify_run
       RETURNING user_id`,
    [runId, JSON.stringify({ kind: "resync", runId }), userIds],
  );
  return rows.length;
}

export async function clearVerification(db: Queryable, userId: string): Promise<void> {
  await db.query(`UPDATE reconcile_queue SET verify_run = NULL WHERE user_id = $1`, [userId]);
}

export async function countIdpUsers(db: Queryable): Promise<number> {
  const rows: { n: number }[] = await db.query(`SELECT count(*)::int AS n FROM idp_users`);
  return rows[0]?.n ?? 0;
}

/** Platform accounts whose IdP user no longer exists, in user-id order after `afterUserId`. */
export async function listOrphanAccounts(
  db: Queryable,
  afterUserId: string | undefined,
  limit: number,
): Promise<{ userId: string; platformId: string | null }[]> {
  return db.query(
    `SELECT a.user_id AS "userId", a.platform_id AS "platformId" FROM platform_accounts a
      WHERE ($1::uuid IS NULL OR a.user_id > $1::uuid) AND NOT EXISTS (SELECT 1 FROM idp_users u WHERE u.id = a.user_id)
      ORDER BY a.user_id LIMIT $2`,
    [afterUserId ?? null, limit],
  );
}

/**
 * Finished resync runs older than `cutoff`, and schedule slots older than it except the latest
 * (which says when the cron last fired). A running run is never removed.
 */
export async function deleteRunsBefore(db: Queryable, cutoff: Date): Promise<number> {
  await db.execute(`DELETE FROM resync_schedule WHERE slot < $1 AND slot < (SELECT max(slot) FROM resync_schedule)`, [
    cutoff,
  ]);
  return db.execute(`DELETE FROM resync_runs WHERE status <> 'running' AND finished_at < $1`, [cutoff]);
}
