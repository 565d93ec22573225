import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * What the platform's record says about managed accounts (docs/platform-record.md, "What each event does"):
 *
 * - `reconcile_queue.platform_check`: the user's account is to be read once on the platform (a GET
 *   by id) because its record says someone changed it there; the reconciler then puts back what the
 *   mapping grants (PLATFORM_OUTSIDE_CHANGES=revert) or keeps what it found (report).
 * - `platform_outside_changes`: per managed account, the last change made outside the connector that
 *   is kept (report): what was granted and taken away in the dashboard, by whom, when; or that the
 *   account was removed by hand.
 * - `platform_account_activity`: per account (its userName), the last sign-in, the last failed login
 *   and whether it is suspended, as the record says.
 * - `platform_catalogue_edits`: custom roles, permission sets and teams edited in the dashboard, one
 *   row per event (`event_id` makes a re-run count once).
 */
export class PlatformOutsideChanges1763700002400 implements MigrationInterface {
  name = "PlatformOutsideChanges1763700002400";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE reconcile_queue ADD COLUMN platform_check boolean NOT NULL DEFAULT false`);
    await q.query(`
      CREATE TABLE platform_outside_changes (
        user_id uuid PRIMARY KEY,
        user_name text NOT NULL,
        change text NOT NULL CHECK (change IN ('permissions', 'removed')),
        event text NOT NULL,
        actor text NOT NULL,
        at timestamptz NOT NULL,
        granted jsonb,
        withdrawn jsonb,
        recorded_at timestamptz NOT NULL
      )`);
    await q.query(`
      CREATE TABLE platform_account_activity (
        user_name text PRIMARY KEY,
        last_sign_in_at timestamptz,
        last_failed_login_at timestamptz,
        suspended boolean NOT NULL DEFAULT false,
        suspended_at timestamptz,
        suspended_by text,
        suspension_changed_at timestamptz
      )`);
    await q.query(`
      CREATE TABLE platform_catalogue_edits (
        id bigserial PRIMARY KEY,
        event_id bigint UNIQUE,
        kind text NOT NULL CHECK (kind IN ('role', 'permission-set', 'team')),
        name text,
        event text NOT NULL,
        at timestamptz NOT NULL,
        actor text NOT NULL
      )`);
    await q.query(
      `CREATE INDEX platform_catalogue_edits_name ON platform_catalogue_edits (kind, lower(name), at DESC)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE platform_catalogue_edits`);
    await q.query(`DROP TABLE platform_account_activity`);
    await q.query(`DROP TABLE platform_outside_changes`);
    await q.query(`ALTER TABLE reconcile_queue DROP COLUMN platform_check`);
  }
}
