import { Strategy as SamlStrategy, ValidateInResponseTo, type Profile, type VerifiedCallback } from "@node-saml/passport-saml";
import { Router, type NextFunction, type Request, type Response } from "express";
import type { Clock } from "../../../clock.js";
import type { Env } from "../../../config/env.js";
import type { AdminSessionRepository } from "../../../db/adminSessionRepository.js";
import { log } from "../../../logging/logger.js";
import { actorForLog, type AdminActor } from "../actor.js";
import { establishSession } from "../session/index.js";
import { renderMessagePage } from "../ui/render.js";
import { checkNameIdUncommented, checkResponseAddressing, SamlAddressingError } from "./samlAddressing.js";
import { PgSamlRequestCache } from "./samlRequestCache.js";
import { parseRoleValues, roleFromProfile, type RoleRules } from "./samlRoles.js";

/**
 * SAML 2.0 sign-in (SP-initiated): GET /saml/login → IdP → POST /saml/acs. Both the response
 * and the assertion must be signed by SAML_IDP_CERT; audience, Destination/Recipient, the time
 * window and InResponseTo (one of our requests, used once) are checked. Any rejection is a
 * 401/403 page, never a 500. Passport is used without its session support: we start our own
 * session (with a fresh id) from the verified profile.
 */

/** How long an AuthnRequest may wait for its response; also the acceptable assertion age. */
const REQUEST_TTL_MS = 10 * 60_000;
const CLOCK_SKEW_MS = 60_000;

type Deps = { env: Env; clock: Clock; sessions: AdminSessionRepository };

class RefusedRole extends Error {}

export function samlRouter(deps: Deps): Router {
  const { env } = deps;
  const acsUrl = env.SAML_CALLBACK_URL!;
  const rules: RoleRules = {
    attribute: env.SAML_ROLE_ATTRIBUTE,
    adminValues: parseRoleValues(env.SAML_ADMIN_VALUES),
    viewerValues: parseRoleValues(env.SAML_VIEWER_VALUES),
  };

  const verify = (profile: Profile | null, done: VerifiedCallback): void => {
    void (async () => {
      if (!profile?.nameID) throw new Error("the assertion names no user");
      checkResponseAddressing(profile, acsUrl);
      checkNameIdUncommented(profile);
      // node-saml checked InResponseTo; claiming it here makes two concurrent copies of one response fail too.
      const inResponseTo = typeof profile.inResponseTo === "string" ? profile.inResponseTo : undefined;
      if (!inResponseTo || !(await deps.sessions.consumeResponse(inResponseTo, deps.clock.now()))) {
        throw new Error("this response was already used");
      }
      const role = roleFromProfile(profile, rules);
      if (!role) throw new RefusedRole(profile.nameID);
      const actor: AdminActor = { name: profile.nameID, role, via: "saml" };
      return actor;
    })().then(
      (actor) => done(null, actor as unknown as Record<string, unknown>),
      (error: Error) => done(error),
    );
  };

  const strategy = new SamlStrategy(
    {
      name: "saml",
      entryPoint: env.SAML_ENTRY_POINT!,
      issuer: env.SAML_ISSUER!,
      audience: env.SAML_ISSUER!,
      callbackUrl: acsUrl,
      idpCert: normalisePem(env.SAML_IDP_CERT!),
      wantAuthnResponseSigned: true,
      wantAssertionsSigned: true,
      acceptedClockSkewMs: CLOCK_SKEW_MS,
      maxAssertionAgeMs: REQUEST_TTL_MS,
      validateInResponseTo: ValidateInResponseTo.always,
      requestIdExpirationPeriodMs: REQUEST_TTL_MS,
      cacheProvider: new PgSamlRequestCache(deps.sessions, deps.clock, REQUEST_TTL_MS),
      // Entra and Okta pick the authentication method (MFA, passwordless); asking for "password" breaks that.
      disableRequestedAuthnContext: true,
      signatureAlgorithm: "sha256",
    },
    verify,
    (_profile, done) => done(null, undefined),
  );

  const router = Router();

  router.get("/saml/metadata", (_req, res) => {
    res.type("application/samlmetadata+xml").send(strategy.generateServiceProviderMetadata(null, null));
  });

  router.get("/saml/login", (req, res) => {
    // Passport's own pattern: a per-request object whose redirect/success/fail/error answer this request.
    const instance = Object.create(strategy) as SamlStrategy;
    instance.redirect = (url: string) => res.redirect(302, url);
    instance.error = (err: Error) => failedLogin(req, res, err);
    instance.authenticate(req as never, {}); // passport-saml bundles its own @types/express
  });

  router.post("/saml/acs", (req: Request, res: Response, next: NextFunction) => {
    const body = req.body as Record<string, unknown> | undefined;
    const samlResponse = typeof body?.SAMLResponse === "string" ? body.SAMLResponse : undefined;
    if (!samlResponse) return failedLogin(req, res, new SamlAddressingError("no SAMLResponse was posted"));
    const instance = Object.create(strategy) as SamlStrategy;
    instance.success = (user: unknown) => {
      const actor = user as AdminActor;
      establishSession(req, actor).then(() => {
        log.info("admin", "signed in", { actor: actorForLog(actor.name), role: actor.role, via: "saml" });
        res.redirect(303, req.baseUrl || "/admin");
      }, next);
    };
    instance.fail = () => failedLogin(req, res, new Error("the response was not accepted"));
    instance.error = (err: Error) => failedLogin(req, res, err);
    instance.redirect = (url: string) => res.redirect(302, url);
    instance.authenticate(req as never, {}); // passport-saml bundles its own @types/express
  });

  return router;
}

function failedLogin(req: Request, res: Response, error: Error): void {
  if (error instanceof RefusedRole) {
    log.warn("admin", "saml sign-in refused: no role", { actor: actorForLog(error.message) });
    renderMessagePage(
      res,
      403,
      "No access",
      "You signed in, but your account has no role for this console (neither viewer nor admin). Ask your identity administrator to assign one.",
    );
    return;
  }
  log.warn("admin", "saml sign-in rejected", { reason: error.message, ip: req.ip });
  renderMessagePage(res, 401, "Sign-in rejected", `The single sign-on response was not accepted: ${error.message}. Nothing was signed in.`, undefined);
}

/** SAML_IDP_CERT may be a PEM, a bare base64 body, or a PEM with literal "\n" (common in .env files). */
function normalisePem(value: string): string {
  return value.replace(/\\n/g, "\n").trim();
}
