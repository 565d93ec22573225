import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * The reasons for an applied state, kept with the log entry that applied it: per grant, the
 * mapping rules (description, file, line) and the IdP groups that gave it then. The access report
 * as of a past moment shows them (docs/access-review.md). Null on entries written before, and on
 * entries that apply no desired state.
 */
export class ReconcileLogReasons1763700001000 implements MigrationInterface {
  name = "ReconcileLogReasons1763700001000";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE reconcile_log ADD COLUMN reasons jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE reconcile_log DROP COLUMN reasons`);
  }
}
