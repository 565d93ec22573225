import { readFileSync } from "node:fs";
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  errors as joseErrors,
  jwtVerify,
  type JSONWebKeySet,
  type JWTPayload,
  type JWTVerifyGetKey,
} from "jose";
import type { Clock } from "../../clock.js";
import type { Env } from "../../config/env.js";
import { OAuthError } from "./errors.js";

/**
 * JWT client assertions (RFC 7523 section 2.2), the path of Entra's workload identity federation:
 * the IdP signs a JWT, and the token endpoint checks it against the configured issuer's keys with
 * `jose` (no hand-written crypto). What is refused: `alg: none` and every symmetric algorithm (the
 * allow-list names asymmetric ones only, so an HS256 token "signed" with a public key is refused
 * before any key is tried), an unknown `kid` (after one bounded refresh of the remote key set), a
 * wrong `iss`, `aud`, `sub` or `tid`, an expired or not-yet-valid token, and one without `exp`.
 * Replays are the token endpoint's to refuse (the `jti` store is shared by replicas, in Postgres).
 */

/** Asymmetric algorithms only: never `none`, never HS*. */
const ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"];
/** Clock skew tolerated on exp/nbf/iat between the IdP and us. */
const CLOCK_TOLERANCE_SECONDS = 60;
/** An assertion valid for longer than this is refused: a long-lived "assertion" is a long-lived secret. */
const MAX_LIFETIME_SECONDS = 24 * 3600;

export type AssertionIssuer = {
  issuer: string;
  audience: string;
  subject: string;
  tenantId?: string | undefined;
  /** The least time between two JWKS fetches prompted by an unknown kid. */
  refreshSeconds: number;
  /** The issuer's keys: a JWKS URL (fetched, cached) or a JWKS read from a file. */
  keys: { url: URL } | { jwks: JSONWebKeySet };
};

export type VerifiedAssertion = {
  subject: string;
  jti: string | undefined;
  /**
   * The last moment this assertion could be accepted: its `exp` plus the clock tolerance. Its jti is
   * kept until then; kept only until `exp`, a replay inside the tolerance was accepted (issue 45).
   */
  acceptableUntil: Date;
};

export function assertionIssuerFromEnv(env: Env): AssertionIssuer | undefined {
  if (!env.OAUTH_JWT_ISSUER || !env.OAUTH_JWT_AUDIENCE || !env.OAUTH_JWT_SUBJECT) return undefined;
  const keys = env.OAUTH_JWT_JWKS_URL
    ? { url: new URL(env.OAUTH_JWT_JWKS_URL) }
    : { jwks: JSON.parse(readFileSync(env.OAUTH_JWT_JWKS_FILE!, "utf8")) as JSONWebKeySet };
  return {
    issuer: env.OAUTH_JWT_ISSUER,
    audience: env.OAUTH_JWT_AUDIENCE,
    subject: env.OAUTH_JWT_SUBJECT,
    tenantId: env.OAUTH_JWT_TENANT_ID,
    refreshSeconds: env.OAUTH_JWT_JWKS_REFRESH_SECONDS,
    keys,
  };
}

export class ClientAssertionVerifier {
  private readonly getKey: JWTVerifyGetKey;

  constructor(
    private readonly config: AssertionIssuer,
    private readonly clock: Clock,
  ) {
    this.getKey =
      "url" in config.keys
        ? // Cached for 10 minutes; an unknown kid refetches, at most once per refreshSeconds (bounded), 5 s timeout.
          createRemoteJWKSet(config.keys.url, {
            cacheMaxAge: 600_000,
            cooldownDuration: config.refreshSeconds * 1000,
            timeoutDuration: 5_000,
          })
        : createLocalJWKSet(config.keys.jwks);
  }

  get issuer(): string {
    return this.config.issuer;
  }

  /** The assertion's subject, jti and expiry when it passes every check; an OAuthError (invalid_client) otherwise. */
  async verify(assertion: string): Promise<VerifiedAssertion> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(assertion, this.getKey, {
        algorithms: ALGORITHMS,
        issuer: this.config.issuer,
        audience: this.config.audience,
        subject: this.config.subject,
        requiredClaims: ["exp"],
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        currentDate: this.clock.now(),
      }));
    } catch (error) {
      if (keysUnreadable(error))
        throw new OAuthError("server_error", "The issuer's keys could not be read; try again later", { cause: error });
      throw new OAuthError("invalid_client", `The client assertion was refused: ${refusalReason(error)}`, {
        cause: error,
      });
    }
    if (this.config.tenantId !== undefined && payload["tid"] !== this.config.tenantId)
      throw new OAuthError("invalid_client", "The client assertion was refused: its tid is not the configured tenant");
    const now = this.clock.now().getTime() / 1000;
    if (payload.exp! - Math.min(payload.iat ?? now, now) > MAX_LIFETIME_SECONDS)
      throw new OAuthError("invalid_client", "The client assertion was refused: it is valid for more than 24 hours");
    if (payload.jti !== undefined && (typeof payload.jti !== "string" || payload.jti.length > 256))
      throw new OAuthError("invalid_client", "The client assertion was refused: its jti is not a short string");
    return {
      subject: payload.sub!,
      jti: payload.jti,
      acceptableUntil: new Date((payload.exp! + CLOCK_TOLERANCE_SECONDS) * 1000),
    };
  }
}

/** The key set could not be fetched or read: our side (or the issuer's), not the client's fault. */
function keysUnreadable(error: unknown): boolean {
  if (!(error instanceof joseErrors.JOSEError)) return true;
  return error.code === "ERR_JWKS_TIMEOUT" || error.code === "ERR_JWKS_INVALID";
}

/** What to tell the client (and the log): the class of refusal, never the token. */
function refusalReason(error: unknown): string {
  if (error instanceof joseErrors.JWTExpired) return "it has expired";
  if (error instanceof joseErrors.JWTClaimValidationFailed)
    return `its ${error.claim} claim is not valid (${error.reason})`;
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return "its algorithm is not allowed (asymmetric signatures only)";
  if (error instanceof joseErrors.JWKSNoMatchingKey) return "no key of the issuer matches its kid";
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return "its signature does not verify";
  return "it is not a valid signed JWT";
}
