import { randomBytes, timingSafeEqual } from "node:crypto";
import type { Clock } from "../../clock.js";
import type { OAuthRepository } from "../../db/auth/oauthRepository.js";
import { log } from "../../logging/logger.js";
import { hashToken } from "../scimTokens.js";
import type { ClientAssertionVerifier } from "./clientAssertion.js";
import type { AuthorizationCodes } from "./authorizationCode.js";
import { OAuthError } from "./errors.js";

/**
 * The token endpoint's grant: `client_credentials`, the client authenticated by a client secret
 * (client_secret_basic or client_secret_post) or by a JWT assertion (RFC 7523), answered with a
 * short-lived access token for the SCIM API.
 *
 * Why opaque tokens stored hashed, not self-signed JWTs: the SCIM API already checks bearer
 * tokens by hash with a short in-memory cache (src/auth/scimTokens.ts), so an access token costs
 * the same on the hot path as a bearer token (a SHA-256 and a map lookup; docs/performance.md
 * measures both), one check serves both kinds, and a token is revoked by a row (revoking its
 * client stops every token at once), which a self-contained JWT cannot be before it expires. The
 * price, a database row per token issued, is one row an hour per IdP connection.
 */

export const JWT_BEARER = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/** What every token issued may do: the SCIM API, nothing else (the admin API has its own credentials). */
const SCOPE = "scim";

export type ClientCredentialsRequest = {
  clientId?: string | undefined;
  clientSecret?: string | undefined;
  assertionType?: string | undefined;
  assertion?: string | undefined;
};

export type IssuedToken = {
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  scope: string;
  refresh_token?: string;
};

/** authorization_code and refresh_token grants: the client authenticates with its secret. */
export type CodeGrantRequest = ClientCredentialsRequest & {
  code?: string | undefined;
  redirectUri?: string | undefined;
  codeVerifier?: string | undefined;
  refreshToken?: string | undefined;
};

export type TokenServiceOptions = {
  repository: OAuthRepository;
  clock: Clock;
  accessTokenMinutes: number;
  /** Present when OAUTH_JWT_* configure an issuer. */
  assertions?: ClientAssertionVerifier | undefined;
  /** The client name an assertion's tokens are issued to (and a client_id sent with one must equal). */
  assertionClientName: string;
  /** The authorization code grant (src/auth/oauth/authorizationCode.ts) and its refresh tokens' lifetime. */
  codes?: AuthorizationCodes | undefined;
  refreshTokenDays?: number;
};

function generateAccessToken(): string {
  return `scim_at_${randomBytes(32).toString("base64url")}`;
}

/** Expired access tokens, jtis, codes and refresh token families are dropped at most this often, by the process that issues tokens. */
const PURGE_EVERY_MS = 3_600_000;

export class OAuthTokenService {
  private lastPurge = Number.NEGATIVE_INFINITY;

  constructor(private readonly options: TokenServiceOptions) {}

  async clientCredentials(request: ClientCredentialsRequest): Promise<IssuedToken> {
    const hasSecret = request.clientSecret !== undefined;
    const hasAssertion = request.assertion !== undefined || request.assertionType !== undefined;
    if (hasSecret && hasAssertion)
      throw new OAuthError(
        "invalid_request",
        "Use one client authentication method: a secret or an assertion, not both",
      );
    if (hasAssertion) return this.issue(await this.assertionClient(request));
    if (hasSecret)
      return this.issue(await this.secretClient(request.clientId, request.clientSecret!, "client_credentials"));
    throw new OAuthError(
      "invalid_client",
      "Client authentication is required: a client_id and client_secret (Basic or form), or a client_assertion",
    );
  }

  /** grant_type=authorization_code: the code an admin approved, for an access token and a refresh token. */
  async authorizationCode(request: CodeGrantRequest): Promise<IssuedToken> {
    const codes = this.codeGrant();
    const clientId = await this.secretOnly(request);
    if (!request.code) throw new OAuthError("invalid_request", "code is required");
    const familyId = await codes.redeem(clientId, request.code, request.redirectUri, request.codeVerifier);
    return this.issueWithRefresh(codes, clientId, familyId);
  }

  /** grant_type=refresh_token: rotates the refresh token (a reused one revokes its family). */
  async refreshToken(request: CodeGrantRequest): Promise<IssuedToken> {
    const codes = this.codeGrant();
    const clientId = await this.secretOnly(request);
    if (!request.refreshToken) throw new OAuthError("invalid_request", "refresh_token is required");
    const familyId = await codes.rotate(clientId, request.refreshToken);
    return this.issueWithRefresh(codes, clientId, familyId);
  }

  private codeGrant(): AuthorizationCodes {
    if (!this.options.codes)
      throw new OAuthError("unsupported_grant_type", "The authorization code grant is not enabled");
    return this.options.codes;
  }

  private secretOnly(request: ClientCredentialsRequest): Promise<string> {
    if (request.assertion !== undefined || request.assertionType !== undefined)
      throw new OAuthError("invalid_client", "This grant takes a client secret, not an assertion");
    if (request.clientSecret === undefined)
      throw new OAuthError(
        "invalid_client",
        "Client authentication is required: a client_id and client_secret (Basic or form)",
      );
    return this.secretClient(request.clientId, request.clientSecret, "code");
  }

  private async issueWithRefresh(codes: AuthorizationCodes, clientId: string, familyId: string): Promise<IssuedToken> {
    const issued = await this.issue(clientId, familyId);
    return {
      ...issued,
      refresh_token: await codes.issueRefreshToken(clientId, familyId, this.options.refreshTokenDays ?? 90),
    };
  }

  /**
   * The client the secret authenticates. A client registered for the code grant (redirect URIs) takes
   * tokens only through an admin's approval: client_credentials would skip it and its log entry.
   */
  private async secretClient(
    clientId: string | undefined,
    secret: string,
    grant: "client_credentials" | "code",
  ): Promise<string> {
    if (!clientId) throw new OAuthError("invalid_request", "client_id is required with client_secret");
    const hash = hashToken(secret);
    const found = await this.options.repository.findSecret(hash);
    const now = this.options.clock.now();
    // The hash found must be this one (constant time) and belong to the client named.
    if (
      found === undefined ||
      !timingSafeEqual(found.secretHash, hash) ||
      found.clientName.toLowerCase() !== clientId.toLowerCase()
    )
      throw new OAuthError("invalid_client", "The client_id or client_secret is not valid");
    if (found.expiresAt && found.expiresAt <= now)
      throw new OAuthError(
        "invalid_client",
        `This client secret expired on ${found.expiresAt.toISOString()}; add a new one`,
      );
    if (grant === "client_credentials" && found.redirectUris.length > 0)
      throw new OAuthError(
        "unauthorized_client",
        "This client is registered for the authorization code grant (--redirect-uri): it takes tokens through an admin's approval, not client_credentials",
      );
    await this.options.repository.touchClient(found.clientId, now, found.secretId);
    return found.clientId;
  }

  private async assertionClient(request: ClientCredentialsRequest): Promise<string> {
    const { assertions, assertionClientName, repository, clock } = this.options;
    if (request.assertionType !== JWT_BEARER)
      throw new OAuthError("invalid_request", `client_assertion_type must be ${JWT_BEARER}`);
    if (!request.assertion) throw new OAuthError("invalid_request", "client_assertion is required");
    if (!assertions)
      throw new OAuthError("invalid_client", "Client assertions are not configured on this connector (OAUTH_JWT_*)");
    if (request.clientId !== undefined && request.clientId.toLowerCase() !== assertionClientName.toLowerCase())
      throw new OAuthError("invalid_client", "The client_id is not the one configured for client assertions");
    const verified = await assertions.verify(request.assertion);
    const now = clock.now();
    // Recorded in Postgres for as long as the assertion could be accepted: a replay on any replica is refused.
    if (
      verified.jti !== undefined &&
      !(await repository.recordJti(assertions.issuer, verified.jti, verified.acceptableUntil, now))
    )
      throw new OAuthError("invalid_client", "The client assertion was refused: its jti was already used");
    const client = await repository.assertionClient(assertionClientName);
    if (!client)
      throw new OAuthError(
        "invalid_client",
        `The client "${assertionClientName}" is revoked or is not an assertion client`,
      );
    await repository.touchClient(client.id, now);
    return client.id;
  }

  private async issue(clientId: string, familyId?: string): Promise<IssuedToken> {
    const token = generateAccessToken();
    const now = this.options.clock.now();
    const lifetimeSeconds = this.options.accessTokenMinutes * 60;
    await this.options.repository.issueAccessToken(
      clientId,
      hashToken(token),
      now,
      new Date(now.getTime() + lifetimeSeconds * 1000),
      familyId,
    );
    log.info("oauth", "access token issued", { clientId, expiresInSeconds: lifetimeSeconds });
    if (now.getTime() - this.lastPurge >= PURGE_EVERY_MS) {
      this.lastPurge = now.getTime();
      Promise.all([this.options.repository.purgeExpired(now), this.options.codes?.purgeSpent(now)]).catch(
        (error: unknown) => log.warn("oauth", "expired tokens not purged", { error }),
      );
    }
    return { access_token: token, token_type: "Bearer", expires_in: lifetimeSeconds, scope: SCOPE };
  }
}
