import express, { Router, type NextFunction, type Request, type Response } from "express";
import helmet from "helmet";
import type { AuthorizationCodes } from "../../auth/oauth/authorizationCode.js";
import { oauthApprovalRoutes } from "./oauthApproval.js";
import type { Clock } from "../../clock.js";
import type { Env } from "../../config/env.js";
import type { AdminSessions } from "../../admin/sessions.js";
import { AppError, sqlState } from "../../errors.js";
import type { AddressAllowance, FailedAuthThrottle } from "../../auth/authThrottle.js";
import { log } from "../../logging/logger.js";
import { actorForLog } from "../../admin/adminActor.js";
import { actionsRouter } from "./actionsRouter.js";
import { ADMIN_CSS } from "./assets/adminCss.js";
import { localLoginRouter } from "./auth/localLogin.js";
import { samlRouter } from "./auth/saml.js";
import { renderSignInPage } from "./auth/signInPage.js";
import { issueCsrfToken, verifyCsrf } from "./csrf.js";
import { draftUpload } from "./upload.js";
import { adminAuthMode, isDirectLoopbackRequest } from "./exposure.js";
import { pagesRouter } from "./pagesRouter.js";
import { campaignRoutes } from "./campaignPages.js";
import { platformRoutes } from "./platformPages.js";
import type { PlatformRecord } from "../../platformRecord/frontDoor.js";
import type { Evidence } from "../../review/evidence/frontDoor.js";
import type { Campaigns } from "../../review/campaigns/frontDoor.js";
import { requireSignedIn } from "./policy.js";
import { adminSession, endSession, loadActor, SESSION_COOKIE } from "./session/index.js";
import type { AdminActions, AdminDataSources } from "../../admin/sources.js";
import { renderMessagePage } from "./ui/render.js";

export type { AdminActor } from "../../admin/adminActor.js";
export type { AdminActions, AdminDataSources } from "../../admin/sources.js";
export type AdminRouterDeps = {
  env: Env;
  clock: Clock;
  /** Sessions, SAML request ids and consumed responses (built by src/service/http.ts). */
  sessions: AdminSessions;
  sources: AdminDataSources;
  actions: AdminActions;
  /** Failed local sign-ins (ADMIN_TOKEN), throttled; built once by src/service/http.ts. */
  loginThrottle: FailedAuthThrottle;
  /** SAML sign-ins started per address whose request ids are stored (built by src/service/http.ts). */
  samlLoginAllowance: AddressAllowance;
  /** The OAuth authorization code grant, approved on a page here (oauthApproval.tsx). */
  oauthCodes?: AuthorizationCodes;
  /** Access campaigns: the /admin/campaigns pages (src/review/campaigns/frontDoor.ts). */
  campaigns: Campaigns;
  /** The evidence packs: the Access review page's button (src/review/evidence/frontDoor.ts). */
  evidence: Evidence;
  /** The platform's record: the /admin/platform page's imports and uploads (src/platformRecord/frontDoor.ts). */
  platformRecord: PlatformRecord;
};

/**
 * The admin web UI, mounted at /admin (the bearer-token JSON API under /admin/api is mounted
 * before it and never reaches here). Order matters: security headers → loopback guard (local
 * mode) → public assets → session → SAML metadata, login and ACS (no CSRF: the IdP posts it) →
 * sign-in and sign-out (small form bodies, CSRF) → requireSignedIn → form and upload bodies →
 * CSRF → the pages' CSRF token stored before any page is sent → pages and actions. No body is
 * parsed on GET, and none beyond the sign-in forms and the ACS before the session check.
 */
export function adminRouter(deps: AdminRouterDeps): Router {
  const { env } = deps;
  const mode = adminAuthMode(env);
  const { sessions } = deps;
  const router = Router();

  router.use(securityHeaders());
  if (mode === "local" && !env.ADMIN_ALLOW_REMOTE) {
    // Local sign-in is one shared token: refuse anyone not on this machine, whatever HOST says,
    // including visitors that a reverse proxy on this machine forwards.
    router.use((req, res, next) => {
      if (isDirectLoopbackRequest(req)) return next();
      renderMessagePage(
        res,
        403,
        "Not available remotely",
        "Without single sign-on, the admin console only answers on this machine, not through a proxy. Configure SAML sign-in (or set ADMIN_ALLOW_REMOTE=true) to reach it remotely.",
      );
    });
  }
  router.get("/assets/admin.css", (_req, res) => {
    res.type("text/css").setHeader("Cache-Control", "public, max-age=300");
    res.send(ADMIN_CSS);
  });

  const saml =
    mode === "saml"
      ? samlRouter({ env, clock: deps.clock, sessions, withinAllowance: deps.samlLoginAllowance })
      : undefined;
  router.use(
    adminSession({
      sessions,
      clock: deps.clock,
      idleMinutes: env.ADMIN_SESSION_IDLE_MINUTES,
      maxAgeHours: env.ADMIN_SESSION_MAX_AGE_HOURS,
    }),
  );
  router.use(loadActor);
  // Bodies are parsed only on the POST routes that read them: the few that serve visitors not
  // signed in get a small form parser here; every other form waits until the session check.
  if (saml) {
    router.post("/saml/acs", formBody("1mb")); // the IdP posts the signed response here
    router.use(saml); // metadata, login redirect and the ACS
  }

  router.get("/login", issueCsrfToken, (req, res) => {
    if (req.adminActor) return res.redirect(303, req.baseUrl || "/admin");
    renderSignInPage(req, res, mode);
  });
  if (mode === "local") router.use(localLoginRouter(env.ADMIN_TOKEN, formBody("16kb"), deps.loginThrottle));
  router.post("/logout", formBody("16kb"), verifyCsrf, async (req, res) => {
    const actor = req.adminActor;
    await endSession(req);
    res.clearCookie(SESSION_COOKIE, { path: "/admin" });
    if (actor) log.info("admin", "signed out", { actor: actorForLog(actor.name) });
    res.redirect(303, `${req.baseUrl || "/admin"}/login?signedOut=1`);
  });

  router.use(requireSignedIn);
  router.post("/{*path}", formBody("2mb"));
  // The forms with a file: parsed before the CSRF check reads them.
  router.post("/mapping/preview", draftUpload(1_048_576));
  router.post("/platform/events", draftUpload(20 * 1_048_576, "report"));
  router.use(verifyCsrf);
  router.use(issueCsrfToken);
  router.use(pagesRouter(deps.sources, deps.evidence));
  router.use(campaignRoutes(deps.campaigns));
  router.use(oauthApprovalRoutes(deps.oauthCodes));
  router.use(
    platformRoutes({
      record: deps.platformRecord,
      exportSource: env.SECURITY_EVENTS_S3_URI
        ? `s3://${env.SECURITY_EVENTS_S3_URI.bucket}/${env.SECURITY_EVENTS_S3_URI.prefix}`
        : null,
    }),
  );
  router.use(actionsRouter(deps.actions));
  router.use((_req, res) => renderMessagePage(res, 404, "Not found", "There is no admin page at this address."));
  router.use(adminErrorPage);
  return router;
}

/** application/x-www-form-urlencoded bodies, bounded; other content types are left unread. */
function formBody(limit: string) {
  return express.urlencoded({ extended: false, limit, parameterLimit: 5000 });
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
  const status =
    (error as { status?: unknown; statusCode?: unknown }).status ?? (error as { statusCode?: unknown }).statusCode;
  if (error instanceof AppError && error.status < 500)
    return renderMessagePage(res, error.status, titleFor(error.status), error.message);
  if (error instanceof AppError && error.status === 503)
    return renderMessagePage(res, 503, "Not available", error.message);
  // body-parser's errors (too large, malformed) carry a 4xx status.
  if (typeof status === "number" && status >= 400 && status < 500) {
    return renderMessagePage(res, status, titleFor(status), "The request could not be read.");
  }
  // A value PostgreSQL cannot take (a NUL character in a search, say) is the request's fault.
  if (sqlState(error)?.startsWith("22"))
    return renderMessagePage(res, 400, titleFor(400), "A value in the request cannot be used.");
  log.error("admin", "page failed", { error, path: req.path });
  renderMessagePage(
    res,
    500,
    "Something went wrong",
    `The page could not be shown. Reference: ${String(res.locals.requestId ?? "")}`,
  );
}

function titleFor(status: number): string {
  return (
    (
      {
        400: "Bad request",
        401: "Sign-in required",
        403: "Not allowed",
        404: "Not found",
        409: "Conflict",
        413: "Too large",
      } as Record<number, string>
    )[status] ?? "Request refused"
  );
}
