import type { Database } from "../db/database.js";
import { OAuthRepository, type CredentialRecord } from "../db/auth/oauthRepository.js";

/**
 * Every credential an IdP can present (bearer tokens, OAuth client secrets, assertion clients,
 * live access tokens) with its kind, state, last use and expiry: one list for `token list` and the
 * admin UI's Credentials page. Never a secret: a prefix at most.
 */

export type CredentialRow = CredentialRecord & { state: "active" | "revoked" | "expired"; line: string };

export async function listCredentials(db: Database, now: Date): Promise<CredentialRow[]> {
  const records = await new OAuthRepository(db).listCredentials(now);
  return records.map((c) => {
    const state = c.revokedAt ? "revoked" : c.expiresAt && c.expiresAt <= now ? "expired" : "active";
    const stateText = c.revokedAt ? `revoked ${c.revokedAt.toISOString()}` : state;
    const line = [
      c.id,
      c.kind.padEnd(16),
      c.name.padEnd(16),
      c.prefix ? `${c.prefix}…` : "-",
      stateText,
      `last used ${c.lastUsedAt ? c.lastUsedAt.toISOString() : "never"}`,
      `expires ${c.expiresAt ? c.expiresAt.toISOString() : "never"}`,
    ].join("  ");
    return { ...c, state, line };
  });
}
