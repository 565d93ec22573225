import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * The platform this database reconciles with. `platform_accounts` says what the connector made on
 * *a* platform; this row says which one, so a database reused against another platform (a trial
 * against the emulator, then the real platform) is noticed at boot instead of planning "already
 * matches" for accounts that do not exist there (docs/operations.md, "Changing the platform").
 */
export class PlatformBinding1763700001300 implements MigrationInterface {
  name = "PlatformBinding1763700001300";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE platform_binding (
        id smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
        -- the normalised PLATFORM_URL, or 'embedded-emulator'
        platform text NOT NULL,
        bound_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE platform_binding`);
  }
}
