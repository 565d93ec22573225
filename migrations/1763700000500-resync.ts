import type { MigrationInterface, QueryRunner } from "typeorm";

/** Full resyncs: persisted runs with progress, the cron slots that fire once, and verification rows. */
export class Resync1763700000500 implements MigrationInterface {
  name = "Resync1763700000500";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE resync_runs (
        id uuid PRIMARY KEY,
        status text NOT NULL CHECK (status IN ('running', 'succeeded', 'failed')),
        phase text NOT NULL CHECK (phase IN ('plan', 'verify', 'done')),
        dry_run boolean NOT NULL,
        verify boolean NOT NULL,
        trigger text NOT NULL,
        actor text,
        started_at timestamptz NOT NULL,
        finished_at timestamptz,
        -- phase 1 resumes after this IdP user id (then after this platform-account user id)
        cursor uuid,
        orphan_cursor uuid,
        -- the process working phase 1, and when it last said so (a stale heartbeat lets another take over)
        owner text,
        heartbeat_at timestamptz,
        users_total integer NOT NULL DEFAULT 0,
        users_evaluated integer NOT NULL DEFAULT 0,
        users_queued integer NOT NULL DEFAULT 0,
        verify_total integer NOT NULL DEFAULT 0,
        verified integer NOT NULL DEFAULT 0,
        drifted integer NOT NULL DEFAULT 0,
        -- what a dry run found: {"create": n, "update": n, "deprovision": n, ...}
        plan_summary jsonb NOT NULL DEFAULT '{}'::jsonb,
        error text
      )`);
    await q.query(`CREATE INDEX resync_runs_started ON resync_runs (started_at DESC)`);
    await q.query(
      `CREATE UNIQUE INDEX resync_runs_one_running ON resync_runs ((true)) WHERE status = 'running' AND NOT dry_run`,
    );

    // One row per scheduled firing: the replica whose insert wins runs it.
    await q.query(
      `CREATE TABLE resync_schedule (slot timestamptz PRIMARY KEY, run_id uuid, fired_at timestamptz NOT NULL DEFAULT now())`,
    );

    // A queue row may carry a verification request of a run (checked against the platform by GET).
    await q.query(`ALTER TABLE reconcile_queue ADD COLUMN verify_run uuid`);
    await q.query(`ALTER TABLE budget_debits ADD COLUMN run_id uuid`);
    await q.query(`CREATE INDEX budget_debits_run ON budget_debits (run_id) WHERE run_id IS NOT NULL`);
    await q.query(
      `CREATE INDEX reconcile_queue_verify_run ON reconcile_queue (verify_run) WHERE verify_run IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE budget_debits DROP COLUMN run_id`);
    await q.query(`ALTER TABLE reconcile_queue DROP COLUMN verify_run`);
    await q.query(`DROP TABLE resync_schedule`);
    await q.query(`DROP TABLE resync_runs`);
  }
}
