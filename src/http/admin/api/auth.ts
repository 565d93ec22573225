import { createHash, timingSafeEqual } from "node:crypto";
import type { NextFunction, Request, Response } from "express";

/**
 * Bearer-token authentication for the admin JSON API (`Authorization: Bearer $ADMIN_TOKEN`).
 * Hashing both sides first gives equal-length buffers, so the comparison is constant-time
 * whatever the length of what was presented.
 */
export function requireAdminToken(adminToken: string | undefined) {
  const expected = adminToken ? digest(adminToken) : undefined;
  return (req: Request, res: Response, next: NextFunction): void => {
    const header = req.get("authorization") ?? "";
    const match = /^Bearer\s+(.+)$/i.exec(header);
    if (expected && match && timingSafeEqual(digest(match[1]!.trim()), expected)) {
      res.locals.actor = "admin-api";
      next();
      return;
    }
    res.setHeader("WWW-Authenticate", 'Bearer realm="scim-connector admin"');
    res.status(401).json({ error: "unauthorized", message: "Send Authorization: Bearer <ADMIN_TOKEN>." });
  };
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}
