import type { Request } from "express";

/**
 * A cookie's value as the request carries it, URL-decoded (as Express's `res.cookie` encodes it):
 * undefined when it is absent, null when it is there but not decodable (not one we wrote). The two cookies the sign-in reads before any
 * session exists (the SAML login binding, the return path) are read here; the session's own is
 * express-session's.
 */
export function requestCookie(req: Request, name: string): string | null | undefined {
  const raw = new RegExp(`(?:^|;\\s*)${name}=([^;]*)`).exec(req.headers.cookie ?? "")?.[1];
  if (raw === undefined) return undefined;
  try {
    return decodeURIComponent(raw);
  } catch {
    return null;
  }
}
