import type { MigrationInterface, QueryRunner } from "typeorm";

/** IdP bearer tokens (hashed) and the dirty-user marks the reconciler will read. */
export class Foundation1763700000000 implements MigrationInterface {
  name = "Foundation1763700000000";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE EXTENSION IF NOT EXISTS pgcrypto`);
    await q.query(`
      CREATE TABLE scim_tokens (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name text NOT NULL,
        token_hash bytea NOT NULL UNIQUE,
        token_prefix text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz,
        revoked_at timestamptz
      )`);
    await q.query(`CREATE UNIQUE INDEX scim_tokens_active_name ON scim_tokens (lower(name)) WHERE revoked_at IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE scim_tokens`);
  }
}
