import type { Database, Queryable } from "../database.js";

/**
 * The authorization code grant's tables (migration OAuth1763700001950): codes an admin approved
 * at /oauth/authorize, and the refresh tokens rotated from them, grouped in families. Hashes only.
 */

export type StoredCode = {
  clientId: string;
  redirectUri: string;
  codeChallenge: string | null;
  codeChallengeMethod: string | null;
  expiresAt: Date;
  familyId: string;
};

export type CodeUse = { kind: "fresh"; code: StoredCode } | { kind: "reused"; familyId: string } | { kind: "unknown" };
export type RefreshUse =
  | { kind: "fresh"; clientId: string; familyId: string; expiresAt: Date }
  | { kind: "reused"; clientId: string; familyId: string }
  | { kind: "unknown" };

export class OAuthGrantRepository {
  constructor(private readonly db: Database) {}

  async createCode(codeHash: Buffer, code: StoredCode & { approvedBy: string; createdAt: Date }): Promise<void> {
    await this.db.query(
      `INSERT INTO oauth_authorization_codes
         (code_hash, client_id, redirect_uri, code_challenge, code_challenge_method, approved_by, created_at, expires_at, family_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        codeHash,
        code.clientId,
        code.redirectUri,
        code.codeChallenge,
        code.codeChallengeMethod,
        code.approvedBy,
        code.createdAt,
        code.expiresAt,
        code.familyId,
      ],
    );
  }

  /** Marks the code used (once, atomically): fresh the first time, reused after. */
  async useCode(codeHash: Buffer, now: Date): Promise<CodeUse> {
    const rows: {
      client_id: string;
      redirect_uri: string;
      code_challenge: string | null;
      code_challenge_method: string | null;
      expires_at: Date;
      family_id: string;
    }[] = await this.db.query(
      `UPDATE oauth_authorization_codes SET used_at = $2 WHERE code_hash = $1 AND used_at IS NULL RETURNING *`,
      [codeHash, now],
    );
    const r = rows[0];
    if (r)
      return {
        kind: "fresh",
        code: {
          clientId: r.client_id,
          redirectUri: r.redirect_uri,
          codeChallenge: r.code_challenge,
          codeChallengeMethod: r.code_challenge_method,
          expiresAt: r.expires_at,
          familyId: r.family_id,
        },
      };
    const used: { family_id: string }[] = await this.db.query(
      `SELECT family_id FROM oauth_authorization_codes WHERE code_hash = $1`,
      [codeHash],
    );
    return used[0] ? { kind: "reused", familyId: used[0].family_id } : { kind: "unknown" };
  }

  async issueRefreshToken(
    tokenHash: Buffer,
    token: { clientId: string; familyId: string; createdAt: Date; expiresAt: Date },
  ): Promise<void> {
    await this.db.query(
      `INSERT INTO oauth_refresh_tokens (token_hash, client_id, family_id, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)`,
      [tokenHash, token.clientId, token.familyId, token.createdAt, token.expiresAt],
    );
  }

  /** Rotates a refresh token (once, atomically): fresh the first time; reused when it was rotated or revoked before. */
  async useRefreshToken(tokenHash: Buffer, now: Date): Promise<RefreshUse> {
    const rows: { client_id: string; family_id: string; expires_at: Date }[] = await this.db.query(
      `UPDATE oauth_refresh_tokens SET rotated_at = $2
        WHERE token_hash = $1 AND rotated_at IS NULL AND revoked_at IS NULL
        RETURNING client_id, family_id, expires_at`,
      [tokenHash, now],
    );
    const r = rows[0];
    if (r) return { kind: "fresh", clientId: r.client_id, familyId: r.family_id, expiresAt: r.expires_at };
    const seen: { client_id: string; family_id: string }[] = await this.db.query(
      `SELECT client_id, family_id FROM oauth_refresh_tokens WHERE token_hash = $1`,
      [tokenHash],
    );
    return seen[0] ? { kind: "reused", clientId: seen[0].client_id, familyId: seen[0].family_id } : { kind: "unknown" };
  }

  /** Revokes every refresh and access token of a family; how many refresh tokens were still live. */
  async revokeFamily(familyId: string, now: Date): Promise<number> {
    return this.db.transaction(async (tx: Queryable) => {
      const revoked: unknown[] = await tx.query(
        `UPDATE oauth_refresh_tokens SET revoked_at = $2
          WHERE family_id = $1 AND revoked_at IS NULL AND rotated_at IS NULL RETURNING id`,
        [familyId, now],
      );
      await tx.query(`UPDATE oauth_refresh_tokens SET revoked_at = $2 WHERE family_id = $1 AND revoked_at IS NULL`, [
        familyId,
        now,
      ]);
      await tx.query(`UPDATE oauth_access_tokens SET revoked_at = $2 WHERE family_id = $1 AND revoked_at IS NULL`, [
        familyId,
        now,
      ]);
      return revoked.length;
    });
  }

  /**
   * Drops the families that can no longer be used: every refresh token expired before `before`
   * (a rotated token is kept while its family lives, so that its reuse still revokes the family),
   * then the codes left without a family that expired before it (approved but never exchanged, or
   * their family gone). How many refresh tokens and codes were dropped.
   */
  async purgeSpentFamilies(before: Date): Promise<{ refreshTokens: number; codes: number }> {
    return this.db.transaction(async (tx: Queryable) => {
      const refreshTokens = await tx.execute(
        `DELETE FROM oauth_refresh_tokens WHERE family_id IN (
           SELECT family_id FROM oauth_refresh_tokens GROUP BY family_id HAVING max(expires_at) < $1)`,
        [before],
      );
      const codes = await tx.execute(
        `DELETE FROM oauth_authorization_codes c WHERE c.expires_at < $1
            AND NOT EXISTS (SELECT 1 FROM oauth_refresh_tokens r WHERE r.family_id = c.family_id)`,
        [before],
      );
      return { refreshTokens, codes };
    });
  }
}
