import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * Admin UI sign-in state, all in PostgreSQL so that every replica shares it:
 * - admin_sessions: express-session rows; expires_at moves forward on activity (idle timeout).
 * - admin_session_secret: one random key that signs the session cookie, made here so that no
 *   operator has to configure one and every replica agrees on it.
 * - saml_authn_requests: the AuthnRequest ids this service sent (InResponseTo must name one).
 * - saml_consumed_responses: InResponseTo values already used for a login; the primary key makes
 *   a replayed response fail atomically even when two copies arrive at once.
 */
export class AdminSessions1763700000400 implements MigrationInterface {
  name = "AdminSessions1763700000400";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE admin_sessions (
        sid text PRIMARY KEY,
        sess jsonb NOT NULL,
        expires_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX admin_sessions_expires_at ON admin_sessions (expires_at)`);
    await q.query(`
      CREATE TABLE admin_session_secret (
        id smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
        secret bytea NOT NULL DEFAULT gen_random_bytes(32),
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`INSERT INTO admin_session_secret DEFAULT VALUES`);
    await q.query(`
      CREATE TABLE saml_authn_requests (
        id text PRIMARY KEY,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE saml_consumed_responses (
        in_response_to text PRIMARY KEY,
        consumed_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE saml_consumed_responses`);
    await q.query(`DROP TABLE saml_authn_requests`);
    await q.query(`DROP TABLE admin_session_secret`);
    await q.query(`DROP TABLE admin_sessions`);
  }
}
