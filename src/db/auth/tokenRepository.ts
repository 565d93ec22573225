import type { Database } from "../database.js";

/** A credential the SCIM API accepts: a bearer token (`token create`) or an OAuth access token (/oauth/token). */
export type CredentialKind = "bearer" | "access";
export type ActiveCredential = { id: string; tokenHash: Buffer; kind: CredentialKind; expiresAt: Date | null };

export type ScimTokenRecord = {
  id: string;
  name: string;
  tokenPrefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
};

type Row = {
  id: string;
  name: string;
  token_prefix: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
};

const mapToken = (r: Row): ScimTokenRecord => ({
  id: r.id,
  name: r.name,
  tokenPrefix: r.token_prefix,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
  revokedAt: r.revoked_at,
});

export class TokenRepository {
  constructor(private readonly db: Database) {}

  async create(name: string, tokenHash: Buffer, tokenPrefix: string): Promise<ScimTokenRecord> {
    const rows: Row[] = await this.db.query(
      `INSERT INTO scim_tokens (name, token_hash, token_prefix) VALUES ($1, $2, $3) RETURNING *`,
      [name, tokenHash, tokenPrefix],
    );
    return mapToken(rows[0]!);
  }

  async list(): Promise<ScimTokenRecord[]> {
    const rows: Row[] = await this.db.query(`SELECT * FROM scim_tokens ORDER BY created_at`);
    return rows.map(mapToken);
  }

  /** The active token with this hash, and its stored hash for a constant-time re-check. */
  async findActiveByHash(tokenHash: Buffer): Promise<{ id: string; tokenHash: Buffer } | undefined> {
    const rows: { id: string; token_hash: Buffer }[] = await this.db.query(
      `SELECT id, token_hash FROM scim_tokens WHERE token_hash = $1 AND revoked_at IS NULL`,
      [tokenHash],
    );
    return rows[0] ? { id: rows[0].id, tokenHash: rows[0].token_hash } : undefined;
  }

  /**
   * The active credentials among these hashes (one query for all): bearer tokens and OAuth access
   * tokens alike, with their stored hashes for a constant-time re-check. An access token's expiry
   * comes back for the caller to judge by its clock (the injectable one), not the database's.
   */
  async findActiveByHashes(tokenHashes: readonly Buffer[]): Promise<ActiveCredential[]> {
    const rows: { id: string; token_hash: Buffer; kind: CredentialKind; expires_at: Date | null }[] =
      await this.db.query(
        `SELECT id, token_hash, 'bearer' AS kind, NULL::timestamptz AS expires_at
           FROM scim_tokens WHERE token_hash = ANY($1::bytea[]) AND revoked_at IS NULL
         UNION ALL
         SELECT t.id, t.token_hash, 'access', t.expires_at
           FROM oauth_access_tokens t JOIN oauth_clients c ON c.id = t.client_id
          WHERE t.token_hash = ANY($1::bytea[]) AND t.revoked_at IS NULL AND c.revoked_at IS NULL`,
        [tokenHashes],
      );
    return rows.map((r) => ({ id: r.id, tokenHash: r.token_hash, kind: r.kind, expiresAt: r.expires_at }));
  }

  /** Notes a credential's use (its client's too, for an access token: the client is what the operator sees). */
  async touch(id: string, kind: CredentialKind = "bearer"): Promise<void> {
    if (kind === "bearer") {
      await this.db.query(`UPDATE scim_tokens SET last_used_at = now() WHERE id = $1`, [id]);
      return;
    }
    await this.db.query(
      `WITH t AS (UPDATE oauth_access_tokens SET last_used_at = now() WHERE id = $1 RETURNING client_id)
       UPDATE oauth_clients SET last_used_at = now() WHERE id = (SELECT client_id FROM t)`,
      [id],
    );
  }

  /** Revokes the active token with this name or id; returns how many were revoked. */
  async revoke(nameOrId: string): Promise<number> {
    const rows = await this.db.query(
      `UPDATE scim_tokens SET revoked_at = now()
          WHERE revoked_at IS NULL AND (lower(name) = lower($1) OR id::text = $1) RETURNING id`,
      [nameOrId],
    );
    return rows.length;
  }
}
