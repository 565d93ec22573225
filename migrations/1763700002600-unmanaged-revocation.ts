import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * Accounts made by hand, reviewed in a campaign (docs/access-review.md, "Accounts made by hand"):
 *
 * - `account_id`: the id the connector's queue, holds, campaign items and log know the account by
 *   (it has no IdP user, whose id they take otherwise);
 * - `profile`: the name and department the lookup found (a strip PUTs the whole resource: without
 *   them it would blank the account's name). Accounts confirmed before this migration have none:
 *   they go back to 'candidate', and the discovery lane reads them again (one lookup each, no new alert);
 * - `removal`: what a reviewer decided ('strip': one PUT taking its permissions away; 'delete': one
 *   DELETE, after an admin's approval), by whom, when, in which campaign and item, why;
 *   `removed_at`: when the connector carried it out (NULL: still to do, or waiting for approval).
 */
export class UnmanagedRevocation1763700002600 implements MigrationInterface {
  name = "UnmanagedRevocation1763700002600";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE unmanaged_accounts
        ADD COLUMN account_id uuid NOT NULL DEFAULT gen_random_uuid(),
        ADD COLUMN profile jsonb,
        ADD COLUMN removal text CHECK (removal IN ('strip', 'delete')),
        ADD COLUMN removal_by text,
        ADD COLUMN removal_at timestamptz,
        ADD COLUMN removal_campaign_id uuid,
        ADD COLUMN removal_item_id bigint,
        ADD COLUMN removal_comment text,
        ADD COLUMN removed_at timestamptz`);
    await q.query(`CREATE UNIQUE INDEX unmanaged_accounts_account_id ON unmanaged_accounts (account_id)`);
    await q.query(`UPDATE unmanaged_accounts SET state = 'candidate' WHERE state = 'confirmed' AND profile IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX unmanaged_accounts_account_id`);
    await q.query(`
      ALTER TABLE unmanaged_accounts
        DROP COLUMN account_id, DROP COLUMN profile, DROP COLUMN removal, DROP COLUMN removal_by,
        DROP COLUMN removal_at, DROP COLUMN removal_campaign_id, DROP COLUMN removal_item_id,
        DROP COLUMN removal_comment, DROP COLUMN removed_at`);
  }
}
