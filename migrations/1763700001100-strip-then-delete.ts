import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * Strip now, delete later (docs/reconciler.md, "Strip now, delete later"): an account whose user
 * lost all access is PUT with no permissions and kept; it is deleted only after
 * RECONCILE_DEPROVISION_GRACE_MS. The pending delete itself is the user's queue row (not_before);
 * these columns say that the account is stripped and when it may be deleted.
 */
export class StripThenDelete1763700001100 implements MigrationInterface {
  name = "StripThenDelete1763700001100";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE platform_accounts
      -- when the account was stripped of every permission (NULL: it holds what was last applied)
      ADD COLUMN stripped_at timestamptz,
      -- when a stripped account may be deleted (NULL: never, an adopted account kept stripped)
      ADD COLUMN delete_after timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE platform_accounts DROP COLUMN stripped_at, DROP COLUMN delete_after`);
  }
}
