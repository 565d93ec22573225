import { Router, type Request, type RequestHandler, type Response } from "express";
import { log } from "../../../logging/logger.js";
import type { FailedAuthThrottle } from "../../../auth/authThrottle.js";
import { verifyCsrf } from "../csrf.js";
import { establishSession } from "../session/index.js";
import { adminTokenMatches } from "./localToken.js";
import { takeReturnPath } from "./returnTo.js";
import { renderSignInPage } from "./signInPage.js";

/**
 * Local mode: POST /login with ADMIN_TOKEN (constant-time compare) starts an admin session. A
 * wrong token counts toward the failed-auth throttle; past it the page answers 429 with
 * Retry-After (the right token always signs in: see authThrottle.ts).
 */
export function localLoginRouter(
  adminToken: string | undefined,
  formBody: RequestHandler,
  throttle?: FailedAuthThrottle,
): Router {
  const router = Router();
  router.post("/login", formBody, verifyCsrf, async (req: Request, res: Response) => {
    const body = req.body as Record<string, unknown> | undefined;
    const presented = typeof body?.token === "string" ? body.token.trim() : "";
    if (!adminToken || !presented || !adminTokenMatches(presented, adminToken)) {
      log.warn("admin", "local sign-in refused", { ip: req.ip, tokenConfigured: Boolean(adminToken) });
      const throttled = adminToken && presented ? await throttle?.recordFailure(req.ip) : undefined;
      if (throttled) {
        res.setHeader("Retry-After", String(throttled.retryAfterSeconds));
        renderSignInPage(
          req,
          res,
          "local",
          `Too many failed sign-ins. Try again in ${Math.ceil(throttled.retryAfterSeconds / 60)} min.`,
          429,
        );
        return;
      }
      renderSignInPage(
        req,
        res,
        "local",
        adminToken ? "That token is not right." : "ADMIN_TOKEN is not set on the server.",
      );
      return;
    }
    await establishSession(req, { name: "local admin", role: "admin", via: "local" });
    log.info("admin", "signed in", { actor: "local admin", role: "admin", via: "local" });
    res.redirect(303, takeReturnPath(req, res));
  });
  return router;
}
