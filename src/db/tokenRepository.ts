import type { Database } from "./database.js";

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

  /** The active tokens among these hashes (one query for all), with their stored hashes for a constant-time re-check. */
  async findActiveByHashes(tokenHashes: readonly Buffer[]): Promise<{ id: string; tokenHash: Buffer }[]> {
    const rows: { id: string; token_hash: Buffer }[] = await this.db.query(
      `SELECT id, token_hash FROM scim_tokens WHERE token_hash = ANY($1::bytea[]) AND revoked_at IS NULL`,
      [tokenHashes],
    );
    return rows.map((r) => ({ id: r.id, tokenHash: r.token_hash }));
  }

  async touch(id: string): Promise<void> {
    await this.db.query(`UPDATE scim_tokens SET last_used_at = now() WHERE id = $1`, [id]);
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
