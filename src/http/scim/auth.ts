import type { NextFunction, Request, Response } from "express";
import type { ScimTokenVerifier } from "../../auth/scimTokens.js";
import type { FailedAuthThrottle } from "../authThrottle.js";
import { sendScimError } from "./respond.js";

const BEARER = /^Bearer +([\x21-\x7e]{1,512}) *$/i;

/**
 * Bearer-token authentication for every SCIM endpoint; 401 with WWW-Authenticate otherwise
 * (RFC 6750). A wrong token counts toward the failed-auth throttle; past it the answer is 429
 * with Retry-After (a valid token always passes: see authThrottle.ts).
 */
export function requireScimToken(verifier: ScimTokenVerifier, throttle?: FailedAuthThrottle) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const match = BEARER.exec(req.headers.authorization ?? "");
    let throttled;
    try {
      if (match && (await verifier.verify(match[1]!))) return next();
      if (match) throttled = await throttle?.recordFailure(req.ip);
    } catch (error) {
      return next(error);
    }
    if (throttled) {
      res.setHeader("Retry-After", String(throttled.retryAfterSeconds));
      return sendScimError(
        res,
        429,
        `Too many requests with a wrong bearer token; try again in ${throttled.retryAfterSeconds} s`,
      );
    }
    res.setHeader("WWW-Authenticate", 'Bearer realm="scim"');
    sendScimError(
      res,
      401,
      match ? "The bearer token is not valid" : "A bearer token is required (Authorization: Bearer <token>)",
    );
  };
}
