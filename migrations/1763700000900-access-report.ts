import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * Indexes for the access report (src/admin/access/): today's report pages over platform accounts
 * by userName; the report as of a past moment takes, per user, the last log entry that changed
 * what the platform held (docs/access-review.md).
 */
export class AccessReport1763700000900 implements MigrationInterface {
  name = "AccessReport1763700000900";

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX platform_accounts_user_name ON platform_accounts (user_name, user_id) WHERE platform_id IS NOT NULL`,
    );
    await q.query(`
      CREATE INDEX reconcile_log_applied ON reconcile_log (user_id, at DESC, id DESC)
      WHERE user_id IS NOT NULL AND ((action IN ('create', 'update', 'adopt', 'deprovision') AND outcome = 'succeeded') OR (action = 'drift' AND outcome = 'enforced'))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX reconcile_log_applied`);
    await q.query(`DROP INDEX platform_accounts_user_name`);
  }
}
