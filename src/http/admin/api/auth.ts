import { createHash, timingSafeEqual } from "node:crypto";
import type { NextFunction, Request, Response } from "express";
import type { FailedAuthThrottle } from "../../../auth/authThrottle.js";

/** The actor the log names for a call with the admin bearer token. */
const ADMIN_API_ACTOR = "admin-api";

/**
 * Bearer-token authentication for the admin JSON API (`Authorization: Bearer $ADMIN_TOKEN`).
 * Hashing both sides first gives equal-length buffers, so the comparison is constant-time
 * whatever the length of what was presented. A wrong token counts toward the failed-auth
 * throttle (429 with Retry-After past it; a valid token always passes).
 */
export function requireAdminToken(adminToken: string | undefined, throttle?: FailedAuthThrottle) {
  const expected = adminToken ? digest(adminToken) : undefined;
  return (req: Request, res: Response, next: NextFunction): void => {
    const header = req.get("authorization") ?? "";
    const match = /^Bearer\s+(.+)$/i.exec(header);
    if (expected && match && timingSafeEqual(digest(match[1]!.trim()), expected)) {
      res.locals.actor = ADMIN_API_ACTOR;
      next();
      return;
    }
    if (!match || !throttle) return refuse(res);
    throttle.recordFailure(req.ip).then((throttled) => {
      if (!throttled) return refuse(res);
      res.setHeader("Retry-After", String(throttled.retryAfterSeconds));
      res.status(429).json({
        error: "too_many_failures",
        message: `Too many requests with a wrong token; try again in ${throttled.retryAfterSeconds} s.`,
      });
    }, next);
  };
}

/** Who called, for the log: the name requireAdminToken gave the request. */
export function actorOf(res: Response): string {
  return typeof res.locals.actor === "string" ? res.locals.actor : ADMIN_API_ACTOR;
}

function refuse(res: Response): void {
  res.setHeader("WWW-Authenticate", 'Bearer realm="scim-connector admin"');
  res.status(401).json({ error: "unauthorized", message: "Send Authorization: Bearer <ADMIN_TOKEN>." });
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}
