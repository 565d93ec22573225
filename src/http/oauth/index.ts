import express, { type NextFunction, type Request, type Response, type Router } from "express";
import type { FailedAuthThrottle } from "../../auth/authThrottle.js";
import { OAuthError } from "../../auth/oauth/errors.js";
import type { CodeGrantRequest, IssuedToken, OAuthTokenService } from "../../auth/oauth/tokenService.js";
import { log } from "../../logging/logger.js";

/**
 * The OAuth 2.0 token endpoint (RFC 6749 section 3.2) at /oauth/token: parse the form, find the
 * client's authentication (Basic, or client_id/client_secret/client_assertion in the form), call
 * the token service, answer JSON with `Cache-Control: no-store`. A failed client authentication
 * counts toward the failed-auth throttle (surface `oauth`); past it the answer is 429 with
 * Retry-After. Every error is an RFC 6749 error object, never a 500 page.
 */

export type OAuthRouterDeps = { tokens: OAuthTokenService; throttle: FailedAuthThrottle | undefined };

const FORM_LIMIT = "16kb";
/** A Map, not an object: a grant_type such as "constructor" must find nothing. */
const GRANTS = new Map<string, (tokens: OAuthTokenService, request: CodeGrantRequest) => Promise<IssuedToken>>([
  ["client_credentials", (tokens, request) => tokens.clientCredentials(request)],
  ["authorization_code", (tokens, request) => tokens.authorizationCode(request)],
  ["refresh_token", (tokens, request) => tokens.refreshToken(request)],
]);
const BASIC = /^Basic +([A-Za-z0-9+/=]{1,2048}) *$/i;

export function oauthRouter(deps: OAuthRouterDeps): Router {
  const router = express.Router();
  router.post(
    "/token",
    express.urlencoded({ extended: false, limit: FORM_LIMIT, parameterLimit: 20 }),
    (req, res, next) => {
      token(deps, req, res).catch(next);
    },
  );
  // The authorization endpoint needs the admin UI's session: the page lives there (src/http/admin/oauthApproval.tsx).
  router.get("/authorize", (req, res) => {
    const at = req.originalUrl.indexOf("?");
    res.redirect(303, `/admin/oauth/authorize${at === -1 ? "" : req.originalUrl.slice(at)}`);
  });
  router.use("/token", (_req, res) => {
    res.setHeader("Allow", "POST");
    sendOAuthError(
      res,
      405,
      "invalid_request",
      "The token endpoint takes POST with an application/x-www-form-urlencoded body",
    );
  });
  router.use((error: unknown, req: Request, res: Response, _next: NextFunction) => answerError(deps, error, req, res));
  return router;
}

async function token(deps: OAuthRouterDeps, req: Request, res: Response): Promise<void> {
  const form = formOf(req);
  const grantType = form.get("grant_type");
  if (grantType === undefined) throw new OAuthError("invalid_request", "grant_type is required");
  const grant = GRANTS.get(grantType);
  if (!grant)
    throw new OAuthError(
      "unsupported_grant_type",
      "grant_type must be client_credentials, authorization_code or refresh_token",
    );
  const basic = basicCredentials(req.headers.authorization);
  if (basic && (form.has("client_secret") || form.has("client_assertion")))
    throw new OAuthError("invalid_request", "Use one client authentication method: Basic or the form, not both");
  const issued = await grant(deps.tokens, {
    clientId: basic?.clientId ?? form.get("client_id"),
    clientSecret: basic?.clientSecret ?? form.get("client_secret"),
    assertionType: form.get("client_assertion_type"),
    assertion: form.get("client_assertion"),
    code: form.get("code"),
    redirectUri: form.get("redirect_uri"),
    codeVerifier: form.get("code_verifier"),
    refreshToken: form.get("refresh_token"),
  });
  res.setHeader("Cache-Control", "no-store");
  res.setHeader("Pragma", "no-cache");
  res.status(200).json(issued);
}

/** The form's parameters; a parameter sent twice is refused (RFC 6749 section 3.2). */
function formOf(req: Request): Map<string, string> {
  if (!req.is("application/x-www-form-urlencoded"))
    throw new OAuthError("invalid_request", "The body must be application/x-www-form-urlencoded");
  const body = (req.body ?? {}) as Record<string, unknown>;
  const form = new Map<string, string>();
  for (const [name, value] of Object.entries(body)) {
    if (typeof value !== "string")
      throw new OAuthError("invalid_request", `${name.slice(0, 40)} is given more than once`);
    if (value !== "") form.set(name, value);
  }
  return form;
}

/** client_secret_basic: the id and secret form-urlencoded, then base64 (RFC 6749 section 2.3.1). */
function basicCredentials(header: string | undefined): { clientId: string; clientSecret: string } | undefined {
  if (header === undefined) return undefined;
  const match = BASIC.exec(header);
  if (!match) throw new OAuthError("invalid_client", "The Authorization header is not valid Basic credentials");
  const decoded = Buffer.from(match[1]!, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0) throw new OAuthError("invalid_client", "The Authorization header is not valid Basic credentials");
  try {
    return {
      clientId: decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, " ")),
      clientSecret: decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, " ")),
    };
  } catch {
    throw new OAuthError("invalid_client", "The Authorization header is not valid Basic credentials");
  }
}

async function answerError(deps: OAuthRouterDeps, error: unknown, req: Request, res: Response): Promise<void> {
  if (res.headersSent) return void res.destroy();
  if (!(error instanceof OAuthError)) {
    const status = httpStatusOf(error);
    if (status !== undefined && status < 500)
      return sendOAuthError(res, status, "invalid_request", "The request body could not be read as a form");
    log.error("oauth", "token request failed", { error });
    return sendOAuthError(res, 503, "server_error", "The token could not be issued; try again");
  }
  if (error.code === "server_error") log.warn("oauth", "token request could not be served", { error: error.cause });
  if (error.isAuthenticationFailure) {
    log.info("oauth", "client authentication failed", { reason: error.description, ip: req.ip });
    const throttled = await deps.throttle?.recordFailure(req.ip);
    if (throttled) {
      res.setHeader("Retry-After", String(throttled.retryAfterSeconds));
      return sendOAuthError(
        res,
        429,
        error.code,
        `Too many failed client authentications; try again in ${throttled.retryAfterSeconds} s`,
      );
    }
    if (error.code === "invalid_client" && req.headers.authorization !== undefined)
      res.setHeader("WWW-Authenticate", 'Basic realm="oauth"');
  }
  sendOAuthError(res, error.status, error.code, error.description);
}

function httpStatusOf(error: unknown): number | undefined {
  const status = (error as { status?: unknown; statusCode?: unknown } | null)?.status;
  return typeof status === "number" && status >= 400 && status < 600 ? status : undefined;
}

function sendOAuthError(res: Response, status: number, code: string, description: string): void {
  res.setHeader("Cache-Control", "no-store");
  res.status(status).json({ error: code, error_description: description });
}
