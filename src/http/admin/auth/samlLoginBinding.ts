import type { Request, Response } from "express";
import { requestCookie } from "./requestCookie.js";

/**
 * Login CSRF defence: the AuthnRequest ids this browser started are kept in a cookie set by
 * GET /saml/login, and the ACS accepts a response only if its InResponseTo is one of them. A
 * response obtained in another browser (an attacker's own sign-in, pushed to a victim to sign
 * them in as the attacker) is then refused. The ids are not secrets: what matters is that only
 * our site can put them in this browser's cookie jar.
 *
 * The IdP's POST to the ACS is a cross-site request, so the cookie must be SameSite=None, which
 * browsers only accept with Secure; they treat http://localhost as secure, so development works.
 */

const SAML_LOGIN_COOKIE = "scim_admin_saml";
/** Sign-ins started in several tabs at once each still complete. */
const KEEP_REQUESTS = 3;
const ID = /^[A-Za-z_][\w.-]{0,127}$/;

export function rememberLoginRequest(req: Request, res: Response, requestId: string, ttlMs: number): void {
  const ids = [requestId, ...loginRequestsOf(req).filter((id) => id !== requestId)].slice(0, KEEP_REQUESTS);
  res.cookie(SAML_LOGIN_COOKIE, ids.join(" "), {
    path: cookiePath(req),
    httpOnly: true,
    secure: true,
    sameSite: "none",
    maxAge: ttlMs,
  });
}

export function startedInThisBrowser(req: Request, requestId: string | undefined): boolean {
  return requestId !== undefined && loginRequestsOf(req).includes(requestId);
}

export function forgetLoginRequests(req: Request, res: Response): void {
  res.clearCookie(SAML_LOGIN_COOKIE, { path: cookiePath(req), httpOnly: true, secure: true, sameSite: "none" });
}

function loginRequestsOf(req: Request): string[] {
  const value = requestCookie(req, SAML_LOGIN_COOKIE);
  if (!value) return [];
  return value
    .split(" ")
    .filter((id) => ID.test(id))
    .slice(0, KEEP_REQUESTS);
}

function cookiePath(req: Request): string {
  return `${req.baseUrl || "/admin"}/saml`;
}
