import { hash, randomBytes, timingSafeEqual } from "node:crypto";
import type { CredentialKind, TokenRepository } from "../db/auth/tokenRepository.js";

/**
 * IdP credentials on the SCIM API: bearer tokens and OAuth access tokens (issued by /oauth/token,
 * src/auth/oauth), through one check. A token is 32 random bytes, so a plain SHA-256 is the right
 * hash (no password stretching needed); only the hash is stored. Verification compares hashes with
 * timingSafeEqual, and a short cache keeps the hot SCIM path off the database. An access token is
 * refused from the moment it expires (by the injectable clock), whatever the cache says.
 */

export function hashToken(token: string): Buffer {
  return hash("sha256", token, "buffer"); // one-shot: no Hash object per request
}

export function generateToken(): string {
  return `scim_${randomBytes(32).toString("base64url")}`;
}

const CACHE_MS = 10_000;
const TOUCH_EVERY_MS = 60_000;
const VALID_SWEEP_AT = 1_000;
const BATCH_LIMIT = 500; // unknown tokens per lookup query

export type VerifierCacheOptions = {
  /** How long an answer (valid or not) is trusted without asking the database. */
  ttlMs?: number;
  /** Distinct unknown tokens remembered; the oldest is forgotten first. Only invalid tokens land here. */
  negativeLimit?: number;
  now?: () => number;
};

/**
 * Two caches, so that a flood of made-up tokens can never push a good one out: valid tokens
 * (few: one per IdP connection, and an attacker cannot mint them) are kept in their own map, and
 * invalid ones in a bounded map where only other invalid ones compete for room. A repeated bad
 * token is answered from memory; new tokens are looked up together (TokenLookups below), so a
 * flood of bad ones from any number of addresses keeps at most one pool connection busy, and a
 * sender over its own failed-auth limit (src/auth/authThrottle.ts) costs no lookup at all.
 * Nothing else refuses a token unseen: what other senders do (the global cap) never stops a valid
 * one, or anyone could lock the IdP out after a restart (issue 34).
 */
export class ScimTokenVerifier {
  private readonly envHash: Buffer | undefined;
  private readonly valid = new Map<string, { tokenId: string; kind: CredentialKind; until: number }>();
  private readonly invalid = new Map<string, number>();
  private readonly touchedAt = new Map<string, number>();
  private readonly lookups: TokenLookups;
  private readonly ttlMs: number;
  private readonly negativeLimit: number;
  private readonly now: () => number;

  constructor(
    private readonly tokens: Pick<TokenRepository, "findActiveByHashes" | "touch">,
    envToken: string | undefined,
    options: VerifierCacheOptions = {},
  ) {
    this.envHash = envToken ? hashToken(envToken) : undefined;
    this.lookups = new TokenLookups((hashes) => tokens.findActiveByHashes(hashes));
    this.ttlMs = options.ttlMs ?? CACHE_MS;
    this.negativeLimit = options.negativeLimit ?? 10_000;
    this.now = options.now ?? Date.now;
  }

  /**
   * True when `presented` is SCIM_TOKEN or an active token made with `token create`. The answer is
   * synchronous when memory has it (SCIM_TOKEN, or a token seen within the cache's time), a promise
   * only when the database must be asked: every IdP request asks, and on Node 20 each promise
   * costs more while AsyncLocalStorage's hooks are on (docs/performance.md). `addressBlocked` says
   * whether the sender's own address is over its failed-auth limit; the global cap is not asked.
   */
  verify(presented: string, addressBlocked?: () => boolean): boolean | Promise<boolean> {
    const hash = hashToken(presented);
    if (this.envHash && timingSafeEqual(hash, this.envHash)) return true;
    const key = hash.toString("hex");
    const now = this.now();
    const known = this.valid.get(key);
    if (known && known.until > now) return this.touch(known.tokenId, known.kind, now);
    if ((this.invalid.get(key) ?? 0) > now) return false;
    // A token never seen valid, from an address the failed-auth throttle already refuses: no query.
    // (One seen valid, its cache lapsed, is still looked up: an IdP shares its addresses.)
    if (!known && addressBlocked?.()) return false;
    return this.lookUp(hash, key, now);
  }

  private async lookUp(hash: Buffer, key: string, now: number): Promise<boolean> {
    const found = await this.lookups.find(hash, key);
    const expiresAt = found?.expiresAt?.getTime() ?? Number.POSITIVE_INFINITY;
    if (found !== undefined && timingSafeEqual(found.tokenHash, hash) && expiresAt > now) {
      this.invalid.delete(key); // a token created after it was first tried
      // Trusted from memory until the cache lapses or the access token expires, whichever is first.
      this.valid.set(key, { tokenId: found.id, kind: found.kind, until: Math.min(now + this.ttlMs, expiresAt) });
      // Access tokens come and go (one an hour per client): lapsed entries are swept now and then.
      if (this.valid.size > VALID_SWEEP_AT) for (const [k, v] of this.valid) if (v.until <= now) this.valid.delete(k);
      return this.touch(found.id, found.kind, now);
    }
    this.valid.delete(key); // revoked
    this.rememberInvalid(key, now + this.ttlMs);
    return false;
  }

  private rememberInvalid(key: string, until: number): void {
    this.invalid.delete(key); // re-inserted last: Map order is then oldest first
    this.invalid.set(key, until);
    while (this.invalid.size > this.negativeLimit) this.invalid.delete(this.invalid.keys().next().value!);
  }

  private touch(tokenId: string, kind: CredentialKind, now: number): true {
    if ((this.touchedAt.get(tokenId) ?? 0) + TOUCH_EVERY_MS < now) {
      this.touchedAt.set(tokenId, now);
      if (this.touchedAt.size > this.negativeLimit) this.touchedAt.delete(this.touchedAt.keys().next().value!);
      this.tokens.touch(tokenId, kind).catch(() => undefined);
    }
    return true;
  }
}

type FoundToken = { id: string; tokenHash: Buffer; kind: CredentialKind; expiresAt: Date | null };
type WaitingLookup = {
  hash: Buffer;
  key: string;
  settle(found: FoundToken | undefined): void;
  fail(error: unknown): void;
};

/**
 * Token lookups, one query at a time: the tokens that arrive while a query runs are looked up
 * together by the next one (at most BATCH_LIMIT each, first come first served). Every token is
 * still looked up, by a query sent after it arrived, so a valid one is never refused; a flood of
 * unknown tokens costs one pool connection, however many addresses it comes from.
 */
class TokenLookups {
  private waiting: WaitingLookup[] = [];
  private running = false;

  constructor(private readonly findActive: (hashes: Buffer[]) => Promise<FoundToken[]>) {}

  find(hash: Buffer, key: string): Promise<FoundToken | undefined> {
    return new Promise((settle, fail) => {
      this.waiting.push({ hash, key, settle, fail });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    while (this.waiting.length > 0) {
      const batch = this.waiting.splice(0, BATCH_LIMIT);
      try {
        const distinct = new Map(batch.map((w) => [w.key, w.hash]));
        const found = await this.findActive([...distinct.values()]);
        const byKey = new Map(found.map((f) => [f.tokenHash.toString("hex"), f]));
        for (const w of batch) w.settle(byKey.get(w.key));
      } catch (error) {
        for (const w of batch) w.fail(error);
      }
    }
    this.running = false;
  }
}
