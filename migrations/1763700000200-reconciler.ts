import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * The reconciler's state: what the connector last applied on the platform per user, the shared
 * budget ledger, the reconciliation log, and held actions awaiting an admin.
 */
export class Reconciler1763700000200 implements MigrationInterface {
  name = "Reconciler1763700000200";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE platform_accounts (
        user_id uuid PRIMARY KEY,
        user_name text NOT NULL,
        -- the platform's id; NULL while a create has not been confirmed
        platform_id text,
        -- 'creating': a POST may have been sent and its answer not recorded: resolve by lookup, never a blind second POST
        state text NOT NULL CHECK (state IN ('creating', 'active')),
        last_applied jsonb,
        applied_at timestamptz,
        created_by_connector boolean NOT NULL DEFAULT true,
        last_verified_at timestamptz,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      `CREATE UNIQUE INDEX platform_accounts_platform_id ON platform_accounts (platform_id) WHERE platform_id IS NOT NULL`,
    );
    await q.query(
      `CREATE INDEX platform_accounts_verified ON platform_accounts (last_verified_at NULLS FIRST) WHERE platform_id IS NOT NULL`,
    );

    // One row per SCIM request sent (or about to be sent) to the platform. Debited before sending.
    await q.query(`
      CREATE TABLE budget_debits (
        id bigserial PRIMARY KEY,
        spent_at timestamptz NOT NULL,
        action text NOT NULL,
        uses_reserve boolean NOT NULL DEFAULT false,
        user_id uuid,
        reconcile_id uuid
      )`);
    await q.query(`CREATE INDEX budget_debits_spent_at ON budget_debits (spent_at)`);

    await q.query(`
      CREATE TABLE reconcile_log (
        id bigserial PRIMARY KEY,
        at timestamptz NOT NULL,
        reconcile_id uuid,
        user_id uuid,
        user_name text,
        action text NOT NULL,
        outcome text NOT NULL,
        trigger jsonb NOT NULL DEFAULT '{}'::jsonb,
        changes jsonb NOT NULL DEFAULT '[]'::jsonb,
        before jsonb,
        after jsonb,
        platform_status integer,
        calls_spent integer NOT NULL DEFAULT 0,
        error text,
        actor text
      )`);
    await q.query(`CREATE INDEX reconcile_log_at ON reconcile_log (at DESC, id DESC)`);
    await q.query(`CREATE INDEX reconcile_log_user ON reconcile_log (user_id, at DESC)`);
    await q.query(`CREATE INDEX reconcile_log_user_name ON reconcile_log (lower(user_name), at DESC)`);

    await q.query(`
      CREATE TABLE reconcile_holds (
        user_id uuid PRIMARY KEY,
        kind text NOT NULL CHECK (kind IN ('deprovision', 'email_change')),
        user_name text,
        detail jsonb NOT NULL DEFAULT '{}'::jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        decision text CHECK (decision IN ('approved', 'rejected')),
        decided_by text,
        decided_at timestamptz
      )`);

    // The mapping in force, so that a change made while the connector was down is noticed at boot.
    await q.query(`
      CREATE TABLE mapping_state (
        id smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
        hash text NOT NULL,
        source_text text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);

    // claimed_by: the worker's advisory-lock key; a claim whose worker holds no lock any more (it died) is void.
    await q.query(`ALTER TABLE reconcile_queue ADD COLUMN action text,
      ADD COLUMN claimed_by integer, ADD COLUMN claimed_at timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE reconcile_queue DROP COLUMN action, DROP COLUMN claimed_by, DROP COLUMN claimed_at`);
    await q.query(`DROP TABLE mapping_state`);
    await q.query(`DROP TABLE reconcile_holds`);
    await q.query(`DROP TABLE reconcile_log`);
    await q.query(`DROP TABLE budget_debits`);
    await q.query(`DROP TABLE platform_accounts`);
  }
}
