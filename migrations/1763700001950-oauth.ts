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
 * - `oauth_authorization_codes`: codes an admin approved at /oauth/authorize (Okta's authorization
 *   code mode), hashed, one use, ten minutes, with the PKCE challenge when the client sent one.
 * - `oauth_refresh_tokens`: refresh tokens, hashed, rotated on every use; all the tokens descended
 *   from one approval share a `family_id`, so a rotated token presented again (a stolen copy)
 *   revokes the whole family, its access tokens (`oauth_access_tokens.family_id`) included.
 * - `oauth_clients.redirect_uris`: where /oauth/authorize may send a secret client's codes.
 * Expiry warnings need no table: they use the notifications' incident keys.
 */
export class OAuth1763700001950 implements MigrationInterface {
  name = "OAuth1763700001950";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE oauth_clients (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name text NOT NULL,
        kind text NOT NULL CHECK (kind IN ('secret', 'assertion')),
        redirect_uris text[] NOT NULL DEFAULT '{}',
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
        family_id uuid,
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
    await q.query(`
      CREATE TABLE oauth_authorization_codes (
        code_hash bytea PRIMARY KEY,
        client_id uuid NOT NULL REFERENCES oauth_clients(id) ON DELETE CASCADE,
        redirect_uri text NOT NULL,
        code_challenge text,
        code_challenge_method text,
        approved_by text NOT NULL,
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        used_at timestamptz,
        family_id uuid NOT NULL
      )`);
    await q.query(`
      CREATE TABLE oauth_refresh_tokens (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        token_hash bytea NOT NULL UNIQUE,
        client_id uuid NOT NULL REFERENCES oauth_clients(id) ON DELETE CASCADE,
        family_id uuid NOT NULL,
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        rotated_at timestamptz,
        revoked_at timestamptz
      )`);
    await q.query(`CREATE INDEX oauth_refresh_tokens_family ON oauth_refresh_tokens (family_id)`);
    await q.query(
      `CREATE INDEX oauth_access_tokens_family ON oauth_access_tokens (family_id) WHERE family_id IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE oauth_refresh_tokens`);
    await q.query(`DROP TABLE oauth_authorization_codes`);
    await q.query(`DROP TABLE oauth_assertion_jtis`);
    await q.query(`DROP TABLE oauth_access_tokens`);
    await q.query(`DROP TABLE oauth_client_secrets`);
    await q.query(`DROP TABLE oauth_clients`);
  }
}
