import { hash, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import type { Clock } from "../../clock.js";
import type { OAuthGrantRepository } from "../../db/auth/oauthGrantRepository.js";
import type { OAuthRepository } from "../../db/auth/oauthRepository.js";
import { log } from "../../logging/logger.js";
import { hashToken } from "../scimTokens.js";
import { OAuthError } from "./errors.js";

/**
 * The authorization code grant (RFC 6749 section 4.1), Okta's OAuth mode for SCIM apps: an admin
 * signed in to the admin UI (SAML, admin role) approves the request /oauth/authorize shows; the
 * client gets a one-use code (ten minutes) at a redirect URI registered for it, and exchanges it,
 * with its client secret and the PKCE verifier when it sent a challenge (RFC 7636), for an access
 * token and a refresh token. Refresh tokens rotate on every use; all the tokens descended from one
 * approval form a family, and a rotated token presented again (a stolen copy used after the
 * client, or the client after the thief) revokes the whole family (RFC 9700 section 4.14.2).
 */

const CODE_TTL_MS = 10 * 60_000;
/** A family is dropped this long after its last refresh token expired. */
const PURGE_AFTER_MS = 86_400_000;
const PKCE_VALUE = /^[A-Za-z0-9._~-]{43,128}$/;

export type AuthorizeRequest = {
  clientId: string;
  clientName: string;
  redirectUri: string;
  state: string | undefined;
  codeChallenge: string | undefined;
  codeChallengeMethod: "S256" | "plain" | undefined;
};

/** The request cannot be answered at the client's redirect URI (unknown client or URI): show it, never redirect. */
export class AuthorizePageError extends Error {}

export type AuthorizeCheck = { kind: "show"; request: AuthorizeRequest } | { kind: "redirect"; location: string };

export class AuthorizationCodes {
  constructor(
    private readonly clients: OAuthRepository,
    private readonly grants: OAuthGrantRepository,
    private readonly clock: Clock,
  ) {}

  /** Validates an authorization request's parameters (from the query, or the approval form again). */
  async check(params: Record<string, string | undefined>): Promise<AuthorizeCheck> {
    const client = params["client_id"] ? await this.clients.findActiveClient(params["client_id"]) : undefined;
    if (!client || client.kind !== "secret" || client.redirectUris.length === 0)
      throw new AuthorizePageError(
        "No client with this client_id may use the authorization code grant (make one with `scim-connector token client create --name NAME --redirect-uri URL`).",
      );
    const asked = params["redirect_uri"];
    const redirectUri = asked ?? (client.redirectUris.length === 1 ? client.redirectUris[0] : undefined);
    if (redirectUri === undefined || !client.redirectUris.includes(redirectUri))
      throw new AuthorizePageError("The redirect_uri is not one registered for this client.");
    const state = params["state"];
    const back = (error: string, description: string) => ({
      kind: "redirect" as const,
      location: withQuery(redirectUri, { error, error_description: description, state }),
    });
    if (params["response_type"] !== "code")
      return back("unsupported_response_type", "Only response_type=code is supported");
    const challenge = params["code_challenge"];
    const method = params["code_challenge_method"] ?? (challenge ? "plain" : undefined);
    if (challenge !== undefined && (!PKCE_VALUE.test(challenge) || (method !== "S256" && method !== "plain")))
      return back(
        "invalid_request",
        "code_challenge must be 43 to 128 characters, with code_challenge_method S256 or plain",
      );
    if (state !== undefined && state.length > 1024) return back("invalid_request", "state is too long");
    return {
      kind: "show",
      request: {
        clientId: client.id,
        clientName: client.name,
        redirectUri,
        state,
        codeChallenge: challenge,
        codeChallengeMethod: challenge ? (method as "S256" | "plain") : undefined,
      },
    };
  }

  /** An admin approved: a one-use code at the client's redirect URI. */
  async approve(request: AuthorizeRequest, approvedBy: string): Promise<string> {
    const code = `scim_code_${randomBytes(32).toString("base64url")}`;
    const now = this.clock.now();
    await this.grants.createCode(hashToken(code), {
      clientId: request.clientId,
      redirectUri: request.redirectUri,
      codeChallenge: request.codeChallenge ?? null,
      codeChallengeMethod: request.codeChallengeMethod ?? null,
      approvedBy,
      createdAt: now,
      expiresAt: new Date(now.getTime() + CODE_TTL_MS),
      familyId: randomUUID(),
    });
    log.info("oauth", "authorization approved", { client: request.clientName, approvedBy });
    return withQuery(request.redirectUri, { code, state: request.state });
  }

  deny(request: AuthorizeRequest): string {
    return withQuery(request.redirectUri, {
      error: "access_denied",
      error_description: "An administrator denied the request",
      state: request.state,
    });
  }

  /** Exchanges a code for the family it opens; the client is already authenticated (`clientId`). */
  async redeem(
    clientId: string,
    code: string,
    redirectUri: string | undefined,
    verifier: string | undefined,
  ): Promise<string> {
    const now = this.clock.now();
    const use = await this.grants.useCode(hashToken(code), now);
    if (use.kind === "reused") {
      // RFC 6749 4.1.2: a code used twice revokes what was issued with it.
      await this.grants.revokeFamily(use.familyId, now);
      log.warn("oauth", "authorization code reused; its tokens revoked", { familyId: use.familyId });
    }
    if (use.kind !== "fresh")
      throw new OAuthError("invalid_grant", "The authorization code is not valid or was already used");
    const stored = use.code;
    if (stored.clientId !== clientId)
      throw new OAuthError("invalid_grant", "The authorization code was issued to another client");
    if (stored.expiresAt <= now) throw new OAuthError("invalid_grant", "The authorization code has expired");
    if (redirectUri !== stored.redirectUri)
      throw new OAuthError("invalid_grant", "redirect_uri must be the one the code was issued for");
    if (stored.codeChallenge !== null && !pkceMatches(stored.codeChallenge, stored.codeChallengeMethod, verifier))
      throw new OAuthError("invalid_grant", "The code_verifier does not match the code_challenge");
    if (stored.codeChallenge === null && verifier !== undefined)
      throw new OAuthError("invalid_grant", "A code_verifier was sent for a code issued without a code_challenge");
    return stored.familyId;
  }

  /** Rotates a refresh token: the family it belongs to; a reused one revokes the family. */
  async rotate(clientId: string, refreshToken: string): Promise<string> {
    const now = this.clock.now();
    const use = await this.grants.useRefreshToken(hashToken(refreshToken), now);
    if (use.kind === "reused") {
      const live = await this.grants.revokeFamily(use.familyId, now);
      log.warn("oauth", "refresh token reused; its family revoked", { familyId: use.familyId, liveRevoked: live });
      throw new OAuthError(
        "invalid_grant",
        "The refresh token was already used; every token of its authorization is revoked",
      );
    }
    if (use.kind === "unknown") throw new OAuthError("invalid_grant", "The refresh token is not valid");
    if (use.clientId !== clientId)
      throw new OAuthError("invalid_grant", "The refresh token was issued to another client");
    if (use.expiresAt <= now)
      throw new OAuthError("invalid_grant", "The refresh token has expired; approve the client again");
    return use.familyId;
  }

  async issueRefreshToken(clientId: string, familyId: string, days: number): Promise<string> {
    const token = `scim_rt_${randomBytes(32).toString("base64url")}`;
    const now = this.clock.now();
    await this.grants.issueRefreshToken(hashToken(token), {
      clientId,
      familyId,
      createdAt: now,
      expiresAt: new Date(now.getTime() + days * 86_400_000),
    });
    return token;
  }

  /** Drops the codes and refresh token families that can no longer be used (the token service's purge). */
  async purgeSpent(now: Date): Promise<void> {
    await this.grants.purgeSpentFamilies(new Date(now.getTime() - PURGE_AFTER_MS));
  }
}

function pkceMatches(challenge: string, method: string | null, verifier: string | undefined): boolean {
  if (verifier === undefined || !PKCE_VALUE.test(verifier)) return false;
  const derived = method === "S256" ? hash("sha256", verifier, "base64url") : verifier;
  const a = Buffer.from(derived);
  const b = Buffer.from(challenge);
  return a.length === b.length && timingSafeEqual(a, b);
}

function withQuery(uri: string, params: Record<string, string | undefined>): string {
  const url = new URL(uri);
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
  return url.toString();
}
