import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { TokenRepository } from "../db/tokenRepository.js";

/**
 * IdP bearer tokens. A token is 32 random bytes, so a plain SHA-256 is the right hash (no
 * password stretching needed); only the hash is stored. Verification compares hashes with
 * timingSafeEqual, and a short cache keeps the hot SCIM path off the database.
 */

export function hashToken(token: string): Buffer {
  return createHash("sha256").update(token, "utf8").digest();
}

export function generateToken(): string {
  return `scim_${randomBytes(32).toString("base64url")}`;
}

const CACHE_MS = 10_000;
const TOUCH_EVERY_MS = 60_000;

export class ScimTokenVerifier {
  private readonly envHash: Buffer | undefined;
  private readonly cache = new Map<string, { tokenId: string | null; until: number }>();
  private readonly touchedAt = new Map<string, number>();

  constructor(
    private readonly tokens: TokenRepository,
    envToken: string | undefined,
  ) {
    this.envHash = envToken ? hashToken(envToken) : undefined;
  }

  /** True when `presented` is SCIM_TOKEN or an active token made with `token create`. */
  async verify(presented: string): Promise<boolean> {
    const hash = hashToken(presented);
    if (this.envHash && timingSafeEqual(hash, this.envHash)) return true;
    const key = hash.toString("hex");
    const now = Date.now();
    const cached = this.cache.get(key);
    if (cached && cached.until > now) return cached.tokenId !== null && this.touch(cached.tokenId, now);
    const found = await this.tokens.findActiveByHash(hash);
    const valid = found !== undefined && timingSafeEqual(found.tokenHash, hash);
    if (this.cache.size > 1000) this.cache.clear();
    this.cache.set(key, { tokenId: valid ? found!.id : null, until: now + CACHE_MS });
    return valid && this.touch(found!.id, now);
  }

  private touch(tokenId: string, now: number): true {
    if ((this.touchedAt.get(tokenId) ?? 0) + TOUCH_EVERY_MS < now) {
      this.touchedAt.set(tokenId, now);
      this.tokens.touch(tokenId).catch(() => undefined);
    }
    return true;
  }
}
