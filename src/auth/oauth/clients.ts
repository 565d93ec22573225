import { randomBytes } from "node:crypto";
import type { Clock } from "../../clock.js";
import type { OAuthRepository } from "../../db/auth/oauthRepository.js";
import { hashToken } from "../scimTokens.js";

/**
 * OAuth clients that authenticate with a secret: made, given more secrets (rotation: the old one
 * stays valid until revoked or expired) and revoked. One implementation for the CLI and the admin
 * UI. A secret is shown once; only its SHA-256 (32 random bytes: no stretching needed) is stored.
 */

function generateClientSecret(): string {
  return `scs_${randomBytes(32).toString("base64url")}`;
}

export type NewSecret = { clientId: string; secretId: string; secret: string; expiresAt: Date | null };

export class OAuthClients {
  constructor(
    private readonly repository: OAuthRepository,
    private readonly clock: Clock,
  ) {}

  /** A new client with its first secret; `expiresInDays` undefined: the secret does not expire. */
  async create(name: string, expiresInDays?: number, redirectUris: readonly string[] = []): Promise<NewSecret> {
    for (const uri of redirectUris)
      if (!/^https:\/\/[^\s#]+$/i.test(uri) && !/^http:\/\/(127\.0\.0\.1|localhost)[:/][^\s#]*$/i.test(uri))
        throw new Error(
          `--redirect-uri ${uri.slice(0, 100)} must be an https:// URL without a fragment (http only on loopback)`,
        );
    if (!/^[\w.@-]{1,100}$/.test(name))
      throw new Error("the client name must be 1 to 100 letters, digits, '.', '_', '@' or '-' (it is the client_id)");
    if (await this.repository.findActiveClient(name)) throw new Error(`a client named "${name}" already exists`);
    const { id } = await this.repository.createClient(name, "secret");
    if (redirectUris.length > 0) await this.repository.addRedirectUris(id, redirectUris);
    return this.addTo(id, name, expiresInDays);
  }

  /** Another active secret for an existing secret client (rotate: add, switch the IdP, revoke the old one). */
  async addSecret(nameOrId: string, expiresInDays?: number): Promise<NewSecret> {
    const client = await this.repository.findActiveClient(nameOrId);
    if (!client || client.kind !== "secret") throw new Error(`no active secret client named or with id "${nameOrId}"`);
    return this.addTo(client.id, client.name, expiresInDays);
  }

  revokeClient(nameOrId: string): Promise<number> {
    return this.repository.revokeClient(nameOrId, this.clock.now());
  }

  /** Lifts the revocation of an assertion client's name (a revoked name gets no new client by itself). */
  reinstateAssertionClient(name: string): Promise<number> {
    return this.repository.reinstateAssertionClient(name);
  }

  revokeSecret(id: string): Promise<number> {
    return this.repository.revokeSecret(id, this.clock.now());
  }

  private async addTo(clientId: string, name: string, expiresInDays: number | undefined): Promise<NewSecret> {
    if (expiresInDays !== undefined && !(Number.isFinite(expiresInDays) && expiresInDays > 0))
      throw new Error("--expires-days must be a positive number of days");
    const secret = generateClientSecret();
    const expiresAt =
      expiresInDays === undefined ? null : new Date(this.clock.now().getTime() + expiresInDays * 86_400_000);
    const secretId = await this.repository.addSecret(clientId, hashToken(secret), secret.slice(0, 10), expiresAt);
    return { clientId: name, secretId, secret, expiresAt };
  }
}
