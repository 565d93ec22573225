import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * The settle window (docs/reconciler.md): a grant from the IdP waits in the queue until the user
 * has been quiet for RECONCILE_SETTLE_MS, so the grants that follow within seconds go out in the
 * same call. A waiting grant is an ordinary queue row (crash-safe): `not_before` holds it back;
 * these columns say why, for the queue panel, and bound the wait.
 */
export class SettleWindow1763700000700 implements MigrationInterface {
  name = "SettleWindow1763700000700";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE reconcile_queue
      -- when this grant goes out if the user stays quiet (NULL: not waiting to settle)
      ADD COLUMN settle_until timestamptz,
      -- when the current burst of changes was first held; the wait is capped from here (RECONCILE_SETTLE_MAX_MS)
      ADD COLUMN burst_started_at timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE reconcile_queue DROP COLUMN settle_until, DROP COLUMN burst_started_at`);
  }
}
