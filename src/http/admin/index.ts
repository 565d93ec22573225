import express, { Router, type NextFunction, type Request, type Response } from "express";
import helmet from "helmet";
import type { DataSource } from "typeorm";
import type { Clock } from "../../clock.js";
import type { Env } from "../../config/env.js";
import { AdminSessionRepository } from "../../db/adminSessionRepository.js";
import { AppError } from "../../errors.js";
import { failedAuthThrottle, type AuthThrottleMetrics } from "../authThrottle.js";
import { log } from "../../logging/logger.js";
import { actorForLog } from "./actor.js";
import { actionsRouter } from "./actionsRouter.js";
import { ADMIN_CSS } from "./assets/adminCss.js";
import { localLoginRouter } from "./auth/localLogin.js";
import { samlRouter } from "./auth/saml.js";
import { renderSignInPage } from "./auth/signInPage.js";
import { verifyCsrf } from "./csrf.js";
import { draftUpload } from "./upload.js";
import { adminAuthMode, isLoopbackAddress } from "./exposure.js";
import { pagesRouter } from "./pagesRouter.js";
import { requireSignedIn } from "./policy.js";
import { adminSession, endSession, loadActor, SESSION_COOKIE } from "./session/index.js";
import type { AdminActions, AdminDataSources } from "./sources.js";
import { renderMessagePage } from "./ui/render.js";

export type { AdminActor, AdminRole } from "./actor.js";
export type { AdminActions, AdminDataSources } from "./sources.js";
export { can, requireAction, type AdminAction } from "./policy.js";

export type AdminRouterDeps = {
  env: Env;
  db: DataSource;
  clock: Clock;
  sources?: AdminDataSources;
  actions?: AdminActions;
  metrics?: AuthThrottleMetrics;
};

/**
 * The admin web UI, mounted at /admin (the bearer-token JSON API under /admin/api is mounted
 * before it and never reaches here). Order matters: security headers → public assets and SP
 * metadata → session → SAML ACS (no CSRF: the IdP posts it) → CSRF on everything else →
 * sign-in pages → requireSignedIn → pages and actions.
 */
export function adminRouter(deps: AdminRouterDeps): Router {
  const { env } = deps;
  const mode = adminAuthMode(env);
  const sessions = new AdminSessionRepository(deps.db);
  const router = Router();

  router.use(securityHeaders());
  if (mode === "local" && !env.ADMIN_ALLOW_REMOTE) {
    // Local sign-in is one shared token: refuse anyone not on this machine, whatever HOST says.
    router.use((req, res, next) => {
      if (isLoopbackAddress(req.socket.remoteAddress)) return next();
      renderMessagePage(res, 403, "Not available remotely", "Without single sign-on, the admin console only answers on this machine.");
    });
  }
  router.get("/assets/admin.css", (_req, res) => {
    res.type("text/css").setHeader("Cache-Control", "public, max-age=300");
    res.send(ADMIN_CSS);
  });

  const saml = mode === "saml" ? samlRouter({ env, clock: deps.clock, sessions, db: deps.db }) : undefined;
  router.use(express.urlencoded({ extended: false, limit: "2mb", parameterLimit: 5000 }));
  router.use(adminSession({ sessions, clock: deps.clock, idleMinutes: env.ADMIN_SESSION_IDLE_MINUTES }));
  router.use(loadActor);
  if (saml) router.use(saml); // metadata, login redirect and the ACS
  router.use("/mapping/preview", draftUpload(1_048_576)); // the one form with a file: parsed before the CSRF check reads it
  router.use(verifyCsrf);

  router.get("/login", (req, res) => {
    if (req.adminActor) return res.redirect(303, req.baseUrl || "/admin");
    renderSignInPage(req, res, mode);
  });
  if (mode === "local") router.use(localLoginRouter(env.ADMIN_TOKEN, failedAuthThrottle(deps.db, env, "admin-login", deps.metrics)));
  router.post("/logout", async (req, res) => {
    const actor = req.adminActor;
    await endSession(req);
    res.clearCookie(SESSION_COOKIE, { path: "/admin" });
    if (actor) log.info("admin", "signed out", { actor: actorForLog(actor.name) });
    res.redirect(303, `${req.baseUrl || "/admin"}/login?signedOut=1`);
  });

  router.use(requireSignedIn);
  router.use(pagesRouter(deps.sources ?? {}));
  router.use(actionsRouter(deps.actions ?? {}));
  router.use((_req, res) => renderMessagePage(res, 404, "Not found", "There is no admin page at this address."));
  router.use(adminErrorPage);
  return router;
}

/** helmet with a strict CSP: no scripts at all, styles only from our stylesheet, no framing. */
function securityHeaders() {
  return helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        scriptSrc: ["'none'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", "data:"],
        fontSrc: ["'none'"],
        connectSrc: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
        objectSrc: ["'none'"],
      },
    },
    referrerPolicy: { policy: "same-origin" },
    strictTransportSecurity: { maxAge: 15_552_000, includeSubDomains: false },
  });
}

/** The UI's one error translator: AppErrors keep their status and message; anything else is a logged 500. */
function adminErrorPage(error: unknown, req: Request, res: Response, next: NextFunction): void {
  if (res.headersSent) return next(error);
  const status = (error as { status?: unknown; statusCode?: unknown }).status ?? (error as { statusCode?: unknown }).statusCode;
  if (error instanceof AppError && error.status < 500) return renderMessagePage(res, error.status, titleFor(error.status), error.message);
  if (error instanceof AppError && error.status === 501) return renderMessagePage(res, 501, "Not available yet", error.message);
  // body-parser's errors (too large, malformed) carry a 4xx status.
  if (typeof status === "number" && status >= 400 && status < 500) {
    return renderMessagePage(res, status, titleFor(status), "The request could not be read.");
  }
  log.error("admin", "page failed", { error, path: req.path });
  renderMessagePage(res, 500, "Something went wrong", `The page could not be shown. Reference: ${String(res.locals.requestId ?? "")}`);
}

function titleFor(status: number): string {
  return ({ 400: "Bad request", 401: "Sign-in required", 403: "Not allowed", 404: "Not found", 409: "Conflict", 413: "Too large" } as Record<number, string>)[status] ?? "Request refused";
}
