import type { Request, Response } from "express";
import { requestCookie } from "./requestCookie.js";

/**
 * Where a sign-in returns to: the page a visitor asked for before being sent to sign in (an IdP
 * admin approving Okta's OAuth request lands on the approval page again, not on the overview).
 * The path is kept in a cookie rather than in the sign-in URL, so it survives the round trip to the
 * IdP without trusting anything the IdP sends back (RelayState), and it is checked when stored and
 * when used: a path of this admin UI only, so a sign-in can never be made to redirect elsewhere.
 *
 * The IdP's POST to the ACS is cross-site, so the cookie is SameSite=None and Secure (as the SAML
 * login binding's; browsers accept Secure cookies from http://localhost).
 */

const RETURN_COOKIE = "scim_admin_return";
const RETURN_TTL_MS = 15 * 60_000;
const MAX_LENGTH = 2_048;
/** Printable ASCII only: no spaces, backslashes or control characters (a browser reads "\" as "/"). */
const PRINTABLE = /^[\x21-\x5b\x5d-\x7e]+$/;

/** `value` when it is a path of the admin UI mounted at `base` (no host, no "//", no ".." segment). */
export function safeReturnPath(base: string, value: unknown): string | undefined {
  if (typeof value !== "string" || value.length > MAX_LENGTH || !PRINTABLE.test(value)) return undefined;
  if (value !== base && !value.startsWith(`${base}/`) && !value.startsWith(`${base}?`)) return undefined;
  const path = value.split("?")[0]!;
  if (path.includes("//") || path.split("/").some((segment) => segment === ".." || segment === ".")) return undefined;
  return value;
}

const baseOf = (req: Request) => req.baseUrl || "/admin";

/** Remembers the page this GET asked for, before the visitor is sent to sign in. */
export function rememberReturnPath(req: Request, res: Response): void {
  const base = baseOf(req);
  const path = safeReturnPath(base, req.originalUrl);
  if (!path || path.startsWith(`${base}/login`) || path === base) return;
  res.cookie(RETURN_COOKIE, path, {
    path: base,
    httpOnly: true,
    secure: true,
    sameSite: "none",
    maxAge: RETURN_TTL_MS,
  });
}

/** Where a sign-in that just succeeded goes: the remembered page (forgotten now), or the overview. */
export function takeReturnPath(req: Request, res: Response): string {
  const base = baseOf(req);
  const value = requestCookie(req, RETURN_COOKIE);
  if (value === undefined) return base;
  res.clearCookie(RETURN_COOKIE, { path: base, httpOnly: true, secure: true, sameSite: "none" });
  return (value !== null && safeReturnPath(base, value)) || base;
}
