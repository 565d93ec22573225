import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * Failed-authentication throttles (src/http/authThrottle.ts), shared by every replica. The table
 * has the exact shape rate-limiter-flexible's RateLimiterPostgres expects (key, points, expire in
 * epoch ms). The library can create it itself on first use, but it is made here instead: the
 * service's tables all come from migrations (one schema history, readiness waits for it, and the
 * database role needs no CREATE privilege at run time), so the limiter is told the table exists.
 */
export class AuthThrottle1763700000750 implements MigrationInterface {
  name = "AuthThrottle1763700000750";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE auth_throttle (
        key varchar(255) PRIMARY KEY,
        points integer NOT NULL DEFAULT 0,
        expire bigint
      )`);
    // The limiter deletes expired rows every few minutes.
    await q.query(`CREATE INDEX auth_throttle_expire ON auth_throttle (expire)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE auth_throttle`);
  }
}
