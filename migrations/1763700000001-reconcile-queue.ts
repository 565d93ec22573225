import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * The reconcile queue: one row per IdP user whose dashboard account may need work, coalesced.
 * SCIM writes upsert a row here in the same transaction as the IdP change (markUsersDirty);
 * the reconciler claims rows with FOR UPDATE SKIP LOCKED. No foreign key to the user: a deleted
 * user's row must outlive the user so that the deprovision still happens.
 */
export class ReconcileQueue1763700000001 implements MigrationInterface {
  name = "ReconcileQueue1763700000001";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE reconcile_queue (
        user_id uuid PRIMARY KEY,
        -- bumped on every mark; a reconcile deletes the row only if the generation it read is unchanged
        generation bigint NOT NULL DEFAULT 1,
        -- lower runs first; NULL = not yet classified by the planner
        priority smallint,
        -- what woke it: {"kind":"idp","requestId":"...","method":"PATCH","resource":"Groups/..."} | {"kind":"mapping"} | {"kind":"resync","runId":"..."}
        trigger jsonb NOT NULL DEFAULT '{}'::jsonb,
        -- lower = sooner among the same priority (IdP changes 0, mapping changes 1, resync 2)
        source_rank smallint NOT NULL DEFAULT 0,
        enqueued_at timestamptz NOT NULL DEFAULT now(),
        marked_at timestamptz NOT NULL DEFAULT now(),
        not_before timestamptz NOT NULL DEFAULT '-infinity',
        attempts integer NOT NULL DEFAULT 0,
        last_error text,
        parked_at timestamptz
      )`);
    await q.query(
      `CREATE INDEX reconcile_queue_ready ON reconcile_queue (priority, source_rank, not_before, enqueued_at) WHERE parked_at IS NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE reconcile_queue`);
  }
}
