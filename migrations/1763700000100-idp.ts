import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * What the IdP sends over SCIM: users and groups (the full SCIM resource as jsonb, plus the
 * columns that filters, uniqueness and the reconciler read), and group membership as rows so
 * that concurrent member changes are row-level inserts and deletes, never a read-modify-write
 * of a member array.
 */
export class Idp1763700000100 implements MigrationInterface {
  name = "Idp1763700000100";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE idp_users (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_name text NOT NULL,
        external_id text,
        active boolean NOT NULL DEFAULT true,
        display_name text,
        given_name text,
        family_name text,
        department text,
        -- the stored SCIM resource without id and meta (those come from the columns)
        resource jsonb NOT NULL,
        version integer NOT NULL DEFAULT 1,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    // userName is unique case-insensitively (RFC 7643 caseExact=false); 23505 on this index is a 409.
    await q.query(`CREATE UNIQUE INDEX idp_users_user_name ON idp_users (lower(user_name))`);
    await q.query(`CREATE INDEX idp_users_external_id ON idp_users (external_id)`);
    await q.query(`CREATE INDEX idp_users_display_name ON idp_users (lower(display_name))`);
    await q.query(`CREATE INDEX idp_users_created ON idp_users (created_at, id)`);

    await q.query(`
      CREATE TABLE idp_groups (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        display_name text NOT NULL,
        external_id text,
        -- the stored SCIM resource without id, meta and members (members live in idp_group_members)
        resource jsonb NOT NULL,
        version integer NOT NULL DEFAULT 1,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX idp_groups_display_name ON idp_groups (lower(display_name))`);
    await q.query(`CREATE INDEX idp_groups_external_id ON idp_groups (external_id)`);
    await q.query(`CREATE INDEX idp_groups_created ON idp_groups (created_at, id)`);

    await q.query(`
      CREATE TABLE idp_group_members (
        group_id uuid NOT NULL REFERENCES idp_groups (id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES idp_users (id) ON DELETE CASCADE,
        -- the member's display as the IdP sent it, echoed back in members[].display
        display text,
        added_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (group_id, user_id)
      )`);
    await q.query(`CREATE INDEX idp_group_members_user ON idp_group_members (user_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE idp_group_members`);
    await q.query(`DROP TABLE idp_groups`);
    await q.query(`DROP TABLE idp_users`);
  }
}
