import { Router, type Request, type RequestHandler, type Response } from "express";
import { log } from "../../../logging/logger.js";
import { verifyCsrf } from "../csrf.js";
import { establishSession } from "../session/index.js";
import { adminTokenMatches } from "./localToken.js";
import { renderSignInPage } from "./signInPage.js";

/** Local mode: POST /login with ADMIN_TOKEN (constant-time compare) starts an admin session. */
export function localLoginRouter(adminToken: string | undefined, formBody: RequestHandler): Router {
  const router = Router();
  router.post("/login", formBody, verifyCsrf, async (req: Request, res: Response) => {
    const body = req.body as Record<string, unknown> | undefined;
    const presented = typeof body?.token === "string" ? body.token.trim() : "";
    if (!adminToken || !presented || !adminTokenMatches(presented, adminToken)) {
      log.warn("admin", "local sign-in refused", { ip: req.ip, tokenConfigured: Boolean(adminToken) });
      renderSignInPage(req, res, "local", adminToken ? "That token is not right." : "ADMIN_TOKEN is not set on the server.");
      return;
    }
    await establishSession(req, { name: "local admin", role: "admin", via: "local" });
    log.info("admin", "signed in", { actor: "local admin", role: "admin", via: "local" });
    res.redirect(303, req.baseUrl || "/admin");
  });
  return router;
}
