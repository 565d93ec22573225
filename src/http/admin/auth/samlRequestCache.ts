import type { CacheItem, CacheProvider } from "@node-saml/passport-saml";
import type { Clock } from "../../../clock.js";
import type { AdminSessions } from "../../../admin/sessions.js";
import { signedRequestIssuedAt } from "./samlSignedRequestId.js";

/**
 * node-saml's InResponseTo cache, in PostgreSQL so that the replica receiving the IdP's POST
 * knows the AuthnRequest another replica sent. Entries older than `ttlMs` count as absent and
 * are deleted by the next save: anyone can start a sign-in, so rows must not outlive their use.
 * A signed request id (a start past its address's allowance) is valid without a row.
 */
export class PgSamlRequestCache implements CacheProvider {
  private lastConsumedPrune = 0;

  constructor(
    private readonly repo: AdminSessions,
    private readonly clock: Clock,
    private readonly ttlMs: number,
    /** The key of signed request ids (samlSignedRequestId.ts), which are valid without a row. */
    private readonly signingSecret?: () => Promise<string>,
  ) {}

  async saveAsync(key: string, value: string): Promise<CacheItem | null> {
    const now = this.clock.now();
    await this.repo.rememberAuthnRequest(key, now);
    await this.repo.deleteAuthnRequestsBefore(new Date(now.getTime() - this.ttlMs));
    await this.pruneConsumedNowAndThen(now);
    return { value, createdAt: now.getTime() };
  }

  async getAsync(key: string): Promise<string | null> {
    const notBefore = new Date(this.clock.now().getTime() - this.ttlMs);
    const sent =
      (await this.repo.findAuthnRequest(key, notBefore)) ??
      (this.signingSecret ? signedRequestIssuedAt(await this.signingSecret(), key) : undefined);
    return sent && sent >= notBefore && sent <= this.clock.now() ? sent.toISOString() : null;
  }

  async removeAsync(key: string | null): Promise<string | null> {
    if (!key) return null;
    return (await this.repo.forgetAuthnRequest(key)) ? key : null;
  }

  private async pruneConsumedNowAndThen(now: Date): Promise<void> {
    if (now.getTime() - this.lastConsumedPrune < 10 * 60_000) return;
    this.lastConsumedPrune = now.getTime();
    // Consumed-response marks must outlive any assertion that could still be valid: keep a day.
    // Only a verified response writes one, so they cannot pile up from anonymous requests.
    await this.repo.deleteConsumedResponsesBefore(new Date(now.getTime() - Math.max(this.ttlMs, 24 * 3_600_000)));
  }
}
