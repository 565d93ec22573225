import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * OAuth 2.0 for the IdPs (issue 37, docs/operations.md "OAuth"):
 * - `oauth_clients`: a client of the token endpoint. `kind` says how it authenticates: `secret`
 *   (client_credentials with a client secret), `assertion` (a JWT from the configured issuer,
 *   RFC 7523; the row is made on first use, named after the token's subject).
 * - `oauth_client_secrets`: a client's secrets, SHA-256 of 32 random bytes (as scim_tokens); several
 *   may be active at once for rotation, each with an optional expiry.
 * - `oauth_access_tokens`: the short-lived access tokens issued, opaque and hashed, looked up by the
 *   SCIM authentication beside the bearer tokens (one query for both).
 * - `oauth_assertion_jtis`: the `jti` of every accepted client assertion until it expires, shared by
 *   every replica, so an assertion replayed within its lifetime is refused anywhere.
 * - `credential_warnings` is not needed: expiry warnings use the notifications' incident keys.
 */
export class OAuth1763700001950 implements MigrationInterface {
  name = "OAuth1763700001950";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE oauth_clients (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name text NOT NULL,
        kind text NOT NULL CHECK (kind IN ('secret', 'assertion')),
        created_at timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz,
        revoked_at timestamptz
      )`);
    await q.query(`CREATE UNIQUE INDEX oauth_clients_name ON oauth_clients (lower(name)) WHERE revoked_at IS NULL`);
    await q.query(`
      CREATE TABLE oauth_client_secrets (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        client_id uuid NOT NULL REFERENCES oauth_clients(id) ON DELETE CASCADE,
        secret_hash bytea NOT NULL UNIQUE,
        secret_prefix text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz,
        last_used_at timestamptz,
        revoked_at timestamptz
      )`);
    await q.query(`CREATE INDEX oauth_client_secrets_client ON oauth_client_secrets (client_id)`);
    await q.query(`
      CREATE TABLE oauth_access_tokens (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        client_id uuid NOT NULL REFERENCES oauth_clients(id) ON DELETE CASCADE,
        token_hash bytea NOT NULL UNIQUE,
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        last_used_at timestamptz,
        revoked_at timestamptz
      )`);
    await q.query(`CREATE INDEX oauth_access_tokens_expires ON oauth_access_tokens (expires_at)`);
    await q.query(`
      CREATE TABLE oauth_assertion_jtis (
        issuer text NOT NULL,
        jti text NOT NULL,
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (issuer, jti)
      )`);
    await q.query(`CREATE INDEX oauth_assertion_jtis_expires ON oauth_assertion_jtis (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE oauth_assertion_jtis`);
    await q.query(`DROP TABLE oauth_access_tokens`);
    await q.query(`DROP TABLE oauth_client_secrets`);
    await q.query(`DROP TABLE oauth_clients`);
  }
}
