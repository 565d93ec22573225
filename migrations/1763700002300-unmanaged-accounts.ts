import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * Accounts made by hand on the platform (docs/platform-record.md, "Accounts made by hand"): an email
 * the platform's record names that no IdP user has and the connector neither created nor adopted.
 *
 * - `state`: 'candidate' (seen in the record, to confirm by one lookup), 'confirmed' (the lookup
 *   found it; `permissions` and `platform_id` are what it held), 'absent' (the lookup found none),
 *   'removed' (the record says it was removed), 'adopted' (an IdP user now has that email).
 * - `added_by`: the actor of the first account-added event, else of the first event seen
 *   (`added_by_kind` says which kind of event named it, so an older Added Account imported later
 *   still wins).
 * - `alerted_at`: when platform.unmanaged_account was raised for it (once per account).
 *
 * Also indexes the lookups the analysis makes per event: platform accounts and debits by user.
 */
export class UnmanagedAccounts1763700002300 implements MigrationInterface {
  name = "UnmanagedAccounts1763700002300";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE unmanaged_accounts (
        user_name text PRIMARY KEY,
        state text NOT NULL CHECK (state IN ('candidate', 'confirmed', 'absent', 'adopted', 'removed')),
        first_seen timestamptz NOT NULL,
        added_by text,
        added_by_kind text,
        last_event_at timestamptz NOT NULL,
        permissions jsonb,
        platform_id text,
        looked_up_at timestamptz,
        confirmed_at timestamptz,
        alerted_at timestamptz
      )`);
    await q.query(
      `CREATE INDEX unmanaged_accounts_candidates ON unmanaged_accounts (first_seen, user_name) WHERE state = 'candidate'`,
    );
    await q.query(`CREATE INDEX platform_accounts_lower_user_name ON platform_accounts (lower(user_name))`);
    await q.query(`CREATE INDEX budget_debits_user ON budget_debits (user_id, spent_at) WHERE user_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX budget_debits_user`);
    await q.query(`DROP INDEX platform_accounts_lower_user_name`);
    await q.query(`DROP TABLE unmanaged_accounts`);
  }
}
