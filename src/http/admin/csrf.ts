import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { NextFunction, Request, Response } from "express";
import { ForbiddenError } from "../../errors.js";
import { log } from "../../logging/logger.js";
import { saveSession } from "./session/index.js";

/**
 * Synchronizer-token CSRF protection: one random token per session, sent back by every form as
 * the hidden `_csrf` field and compared on every state-changing request. The ACS endpoint is the
 * one exception (the IdP posts it cross-site); its signature and InResponseTo protect it instead.
 */

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** The session's token, made on first use. */
export function csrfToken(req: Request): string {
  if (!req.session.csrfToken) req.session.csrfToken = randomBytes(32).toString("base64url");
  return req.session.csrfToken;
}

/**
 * Makes the session's token before a page is rendered and stores it before the page goes out:
 * express-session saves at `res.end` but writes the page before that save has finished, so a
 * form posted as soon as the page arrived met a session without the token (a 403).
 */
export async function issueCsrfToken(req: Request, _res: Response, next: NextFunction): Promise<void> {
  if (!SAFE_METHODS.has(req.method) || req.session.csrfToken) return next();
  csrfToken(req);
  try {
    await saveSession(req);
  } catch (error) {
    return next(error);
  }
  next();
}

/** A missing or wrong token is a ForbiddenError, which the UI's error page (index.ts) renders. */
export function verifyCsrf(req: Request, _res: Response, next: NextFunction): void {
  if (SAFE_METHODS.has(req.method)) return next();
  const expected = req.session?.csrfToken;
  const body = req.body as Record<string, unknown> | undefined;
  const presented = typeof body?._csrf === "string" ? body._csrf : req.get("x-csrf-token");
  if (expected && presented && sameToken(expected, presented)) return next();
  log.warn("admin", "csrf check failed", { method: req.method, path: req.path, hadSessionToken: Boolean(expected) });
  next(
    new ForbiddenError(
      "This form could not be verified (it may be stale or come from another site). Nothing was changed. Go back, reload the page and try again.",
    ),
  );
}

function sameToken(a: string, b: string): boolean {
  // Hashing first gives equal lengths, which timingSafeEqual needs.
  const digest = (s: string) => createHash("sha256").update(s).digest();
  return timingSafeEqual(digest(a), digest(b));
}
