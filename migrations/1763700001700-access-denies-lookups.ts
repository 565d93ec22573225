import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * Lookups of denies that the active-deny index does not serve: a campaign's denies (its page lists
 * them with a "Lift" button) and a user's denies as of a past moment (the access report's rows).
 */
export class AccessDeniesLookups1763700001700 implements MigrationInterface {
  name = "AccessDeniesLookups1763700001700";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX access_denies_campaign ON access_denies (campaign_id, decided_at)`);
    await q.query(`CREATE INDEX access_denies_user ON access_denies (user_id, decided_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX access_denies_user`);
    await q.query(`DROP INDEX access_denies_campaign`);
  }
}
