import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * The platform's granular permission model (docs/granular-permissions.md):
 * - `platform_identifiers`: the API identifiers (UUIDs) of workspaces, teams, roles and permission
 *   sets, learned from the answers the connector already receives (the platform has no endpoint
 *   listing them), with the name last seen and the one before a rename.
 * - `platform_permission_model`: what the platform's answers show of its model (one row): when an
 *   answer last carried granular strings, and when it refused a legacy string (the incident that
 *   holds grants until the mapping is migrated).
 */
export class PlatformIdentifiers1763700001800 implements MigrationInterface {
  name = "PlatformIdentifiers1763700001800";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE platform_identifiers (
        kind text NOT NULL CHECK (kind IN ('workspace', 'team', 'role', 'permissionSet')),
        id text NOT NULL,
        name text NOT NULL,
        -- a team's workspace identifier
        workspace_id text,
        first_seen timestamptz NOT NULL,
        last_seen timestamptz NOT NULL,
        previous_name text,
        renamed_at timestamptz,
        PRIMARY KEY (kind, id)
      )`);
    await q.query(`
      CREATE TABLE platform_permission_model (
        id smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
        granular_seen_at timestamptz,
        legacy_seen_at timestamptz,
        legacy_refused_at timestamptz,
        refused_value text,
        refused_detail text
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE platform_permission_model`);
    await q.query(`DROP TABLE platform_identifiers`);
  }
}
