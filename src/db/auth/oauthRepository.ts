import type { Database, Queryable } from "../database.js";

/**
 * The OAuth 2.0 token endpoint's tables (migration OAuth1763700001950): clients, their hashed
 * secrets, the hashed access tokens issued, and the client assertions' `jti`s kept until they
 * expire. Hashes only: secrets and tokens are never stored.
 */

export type OAuthClientKind = "secret" | "assertion";

export type ActiveClient = { id: string; name: string; kind: OAuthClientKind; redirectUris: string[] };

export type FoundSecret = {
  secretId: string;
  secretHash: Buffer;
  clientId: string;
  clientName: string;
  expiresAt: Date | null;
  /** Where /oauth/authorize may send the client's codes; any: the client is registered for the code grant. */
  redirectUris: string[];
};

/** One credential an IdP can present, for `token list` and the admin UI. */
export type CredentialRecord = {
  id: string;
  kind: "bearer token" | "client secret" | "client assertion" | "access token";
  name: string;
  prefix: string | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
};

export class OAuthRepository {
  constructor(private readonly db: Database) {}

  async createClient(name: string, kind: OAuthClientKind): Promise<{ id: string }> {
    const rows: { id: string }[] = await this.db.query(
      `INSERT INTO oauth_clients (name, kind) VALUES ($1, $2) RETURNING id`,
      [name, kind],
    );
    return rows[0]!;
  }

  async findActiveClient(nameOrId: string): Promise<ActiveClient | undefined> {
    const rows: { id: string; name: string; kind: OAuthClientKind; redirect_uris: string[] }[] = await this.db.query(
      `SELECT id, name, kind, redirect_uris FROM oauth_clients
        WHERE revoked_at IS NULL AND (lower(name) = lower($1) OR id::text = $1)`,
      [nameOrId],
    );
    const r = rows[0];
    return r && { id: r.id, name: r.name, kind: r.kind, redirectUris: r.redirect_uris };
  }

  async addRedirectUris(clientId: string, uris: readonly string[]): Promise<void> {
    await this.db.query(
      `UPDATE oauth_clients SET redirect_uris = ARRAY(SELECT DISTINCT unnest(redirect_uris || $2::text[])) WHERE id = $1`,
      [clientId, uris],
    );
  }

  /**
   * The active assertion client of this name, made on the first accepted assertion when the name was
   * never used. A revoked name is not made again: it stays revoked until `reinstateAssertionClient`.
   */
  async assertionClient(name: string): Promise<{ id: string } | undefined> {
    const rows: { id: string; kind: OAuthClientKind }[] = await this.db.query(
      `WITH made AS (
         INSERT INTO oauth_clients (name, kind)
         SELECT $1, 'assertion'
          WHERE NOT EXISTS (SELECT 1 FROM oauth_clients WHERE lower(name) = lower($1))
         ON CONFLICT DO NOTHING RETURNING id, kind)
       SELECT id, kind FROM made
       UNION ALL
       SELECT id, kind FROM oauth_clients WHERE lower(name) = lower($1) AND revoked_at IS NULL`,
      [name],
    );
    const row = rows[0];
    return row && row.kind === "assertion" ? { id: row.id } : undefined;
  }

  async addSecret(clientId: string, secretHash: Buffer, prefix: string, expiresAt: Date | null): Promise<string> {
    const rows: { id: string }[] = await this.db.query(
      `INSERT INTO oauth_client_secrets (client_id, secret_hash, secret_prefix, expires_at)
       VALUES ($1, $2, $3, $4) RETURNING id`,
      [clientId, secretHash, prefix, expiresAt],
    );
    return rows[0]!.id;
  }

  /** The unrevoked secret with this hash, of an unrevoked client (its expiry is the caller's to judge, by its clock). */
  async findSecret(secretHash: Buffer): Promise<FoundSecret | undefined> {
    const rows: {
      id: string;
      secret_hash: Buffer;
      client_id: string;
      name: string;
      expires_at: Date | null;
      redirect_uris: string[];
    }[] = await this.db.query(
      `SELECT s.id, s.secret_hash, s.client_id, c.name, s.expires_at, c.redirect_uris
         FROM oauth_client_secrets s JOIN oauth_clients c ON c.id = s.client_id
        WHERE s.secret_hash = $1 AND s.revoked_at IS NULL AND c.revoked_at IS NULL AND c.kind = 'secret'`,
      [secretHash],
    );
    const r = rows[0];
    return (
      r && {
        secretId: r.id,
        secretHash: r.secret_hash,
        clientId: r.client_id,
        clientName: r.name,
        expiresAt: r.expires_at,
        redirectUris: r.redirect_uris,
      }
    );
  }

  /** `familyId`: the authorization an access token descends from (refresh tokens), revoked with it. */
  async issueAccessToken(
    clientId: string,
    tokenHash: Buffer,
    createdAt: Date,
    expiresAt: Date,
    familyId?: string,
  ): Promise<void> {
    await this.db.query(
      `INSERT INTO oauth_access_tokens (client_id, token_hash, created_at, expires_at, family_id) VALUES ($1, $2, $3, $4, $5)`,
      [clientId, tokenHash, createdAt, expiresAt, familyId ?? null],
    );
  }

  async touchClient(clientId: string, now: Date, secretId?: string): Promise<void> {
    await this.db.query(`UPDATE oauth_clients SET last_used_at = $2 WHERE id = $1`, [clientId, now]);
    if (secretId)
      await this.db.query(`UPDATE oauth_client_secrets SET last_used_at = $2 WHERE id = $1`, [secretId, now]);
  }

  /**
   * Records an assertion's jti until `expiresAt` (the last moment the assertion could be accepted,
   * clock skew included); false when it was already recorded (a replay).
   */
  async recordJti(issuer: string, jti: string, expiresAt: Date, now: Date): Promise<boolean> {
    return this.db.transaction(async (tx: Queryable) => {
      // Expired ones go first, so a jti may be reused once its assertion could no longer be accepted.
      await tx.query(`DELETE FROM oauth_assertion_jtis WHERE issuer = $1 AND jti = $2 AND expires_at <= $3`, [
        issuer,
        jti,
        now,
      ]);
      const rows = await tx.query(
        `INSERT INTO oauth_assertion_jtis (issuer, jti, expires_at) VALUES ($1, $2, $3)
         ON CONFLICT DO NOTHING RETURNING jti`,
        [issuer, jti, expiresAt],
      );
      return (rows as unknown[]).length === 1;
    });
  }

  /** Drops what can no longer be used: access tokens and jtis expired for a day. */
  async purgeExpired(now: Date): Promise<void> {
    const before = new Date(now.getTime() - 86_400_000);
    await this.db.query(`DELETE FROM oauth_access_tokens WHERE expires_at < $1`, [before]);
    await this.db.query(`DELETE FROM oauth_assertion_jtis WHERE expires_at < $1`, [before]);
  }

  /** Revokes the active client with this name or id (its secrets and access tokens stop with it). */
  async revokeClient(nameOrId: string, now: Date): Promise<number> {
    const rows: unknown[] = await this.db.query(
      `UPDATE oauth_clients SET revoked_at = $2
        WHERE revoked_at IS NULL AND (lower(name) = lower($1) OR id::text = $1) RETURNING id`,
      [nameOrId, now],
    );
    return rows.length;
  }

  /**
   * An admin lifts the revocation of an assertion client's name: a new active client of that name
   * (the revoked one keeps its revocation, and its access tokens stay refused). 0 when the name has
   * an active client, or its latest client is not a revoked assertion client.
   */
  async reinstateAssertionClient(name: string): Promise<number> {
    const rows: unknown[] = await this.db.query(
      `INSERT INTO oauth_clients (name, kind)
       SELECT latest.name, 'assertion'
         FROM (SELECT name, kind, revoked_at FROM oauth_clients WHERE lower(name) = lower($1)
                ORDER BY created_at DESC LIMIT 1) latest
        WHERE latest.kind = 'assertion' AND latest.revoked_at IS NOT NULL
       ON CONFLICT DO NOTHING RETURNING id`,
      [name],
    );
    return rows.length;
  }

  /** Revokes one secret by id. */
  async revokeSecret(id: string, now: Date): Promise<number> {
    const rows: unknown[] = await this.db.query(
      `UPDATE oauth_client_secrets SET revoked_at = $2 WHERE revoked_at IS NULL AND id::text = $1 RETURNING id`,
      [id, now],
    );
    return rows.length;
  }

  /** Every credential: bearer tokens, client secrets, assertion clients, and access tokens not yet expired. */
  async listCredentials(now: Date): Promise<CredentialRecord[]> {
    const rows: {
      id: string;
      kind: CredentialRecord["kind"];
      name: string;
      prefix: string | null;
      created_at: Date;
      last_used_at: Date | null;
      expires_at: Date | null;
      revoked_at: Date | null;
    }[] = await this.db.query(
      `SELECT id, 'bearer token' AS kind, name, token_prefix AS prefix, created_at, last_used_at,
              NULL::timestamptz AS expires_at, revoked_at FROM scim_tokens
       UNION ALL
       SELECT s.id, 'client secret', c.name, s.secret_prefix, s.created_at, s.last_used_at, s.expires_at,
              COALESCE(s.revoked_at, c.revoked_at)
         FROM oauth_client_secrets s JOIN oauth_clients c ON c.id = s.client_id
       UNION ALL
       SELECT id, 'client assertion', name, NULL, created_at, last_used_at, NULL, revoked_at
         FROM oauth_clients WHERE kind = 'assertion'
       UNION ALL
       SELECT t.id, 'access token', c.name, NULL, t.created_at, t.last_used_at, t.expires_at,
              COALESCE(t.revoked_at, c.revoked_at)
         FROM oauth_access_tokens t JOIN oauth_clients c ON c.id = t.client_id
        WHERE t.expires_at > $1
       ORDER BY created_at`,
      [now],
    );
    return rows.map((r) => ({
      id: r.id,
      kind: r.kind,
      name: r.name,
      prefix: r.prefix,
      createdAt: r.created_at,
      lastUsedAt: r.last_used_at,
      expiresAt: r.expires_at,
      revokedAt: r.revoked_at,
    }));
  }

  /** Per active client, its earliest-expiring active secret not yet expired (for /metrics). */
  async earliestSecretExpiries(now: Date): Promise<{ clientName: string; expiresAt: Date }[]> {
    const rows: { name: string; expires_at: Date }[] = await this.db.query(
      `SELECT c.name, min(s.expires_at) AS expires_at
         FROM oauth_client_secrets s JOIN oauth_clients c ON c.id = s.client_id
        WHERE s.revoked_at IS NULL AND c.revoked_at IS NULL AND s.expires_at > $1
        GROUP BY c.name`,
      [now],
    );
    return rows.map((r) => ({ clientName: r.name, expiresAt: r.expires_at }));
  }

  /** Unrevoked client secrets that expire before `until` and have not yet expired at `now`. */
  async secretsExpiringBefore(
    now: Date,
    until: Date,
  ): Promise<{ id: string; clientName: string; prefix: string; expiresAt: Date }[]> {
    const rows: { id: string; name: string; secret_prefix: string; expires_at: Date }[] = await this.db.query(
      `SELECT s.id, c.name, s.secret_prefix, s.expires_at
         FROM oauth_client_secrets s JOIN oauth_clients c ON c.id = s.client_id
        WHERE s.revoked_at IS NULL AND c.revoked_at IS NULL AND s.expires_at > $1 AND s.expires_at <= $2`,
      [now, until],
    );
    return rows.map((r) => ({ id: r.id, clientName: r.name, prefix: r.secret_prefix, expiresAt: r.expires_at }));
  }
}
