import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * The request limit the platform announces in its answers' rate-limit headers, per family (the
 * SCIM family's daily limit). Shared by the replicas: the one that called the platform records it,
 * the overview and /metrics of every replica read it. Expand only: a new table.
 */
export class PlatformAnnouncedLimit1763700002150 implements MigrationInterface {
  name = "PlatformAnnouncedLimit1763700002150";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE platform_announced_limits (
        family text PRIMARY KEY,
        announced integer NOT NULL,
        header text NOT NULL,
        seen_at timestamptz NOT NULL
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE platform_announced_limits`);
  }
}
