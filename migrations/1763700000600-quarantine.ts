import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * Platform quarantine: one row per endpoint family whose platform work is paused (sustained
 * 401/403, or a failure rate over the threshold). A table, not process memory, so that one
 * replica's discovery pauses every replica; the row is deleted when the family resumes.
 */
export class Quarantine1763700000600 implements MigrationInterface {
  name = "Quarantine1763700000600";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE platform_quarantine (
        family text PRIMARY KEY,
        reason text NOT NULL CHECK (reason IN ('auth', 'failure_rate')),
        detail text NOT NULL,
        last_status integer,
        since timestamptz NOT NULL,
        -- when the cooling period ends: from then on one probe call may decide (half-open)
        resume_at timestamptz NOT NULL,
        -- failed probes so far (each one starts another cooling period)
        failed_probes integer NOT NULL DEFAULT 0,
        tripped_by text NOT NULL,
        -- the replica sending the probe call, and until when its claim holds (a crashed prober lets another try)
        probe_owner text,
        probe_until timestamptz
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE platform_quarantine`);
  }
}
