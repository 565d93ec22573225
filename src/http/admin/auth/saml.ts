import { randomBytes } from "node:crypto";
import {
  SAML,
  ValidateInResponseTo,
  type CacheProvider,
  type Profile,
  type SamlConfig,
} from "@node-saml/passport-saml";
import { Router, type Request, type Response } from "express";
import type { Clock } from "../../../clock.js";
import type { Env } from "../../../config/env.js";
import type { AdminSessions } from "../../../admin/sessions.js";
import { log } from "../../../logging/logger.js";
import type { AddressAllowance } from "../../../auth/authThrottle.js";
import { actorForLog, type AdminActor } from "../../../admin/adminActor.js";
import { reviewerNameProblem } from "../../../review/campaigns/reviewerName.js";
import { establishSession } from "../session/index.js";
import { renderMessagePage } from "../ui/render.js";
import { checkIssuer, checkNameIdUncommented, checkResponseAddressing, SamlAddressingError } from "./samlAddressing.js";
import { requireStrongAlgorithms } from "./samlAlgorithms.js";
import { takeReturnPath } from "./returnTo.js";
import { forgetLoginRequests, rememberLoginRequest, startedInThisBrowser } from "./samlLoginBinding.js";
import { PgSamlRequestCache } from "./samlRequestCache.js";
import { signedRequestId } from "./samlSignedRequestId.js";
import { parseRoleAttributes, parseRoleValues, roleFromProfile, type RoleRules } from "./samlRoles.js";

/**
 * SAML 2.0 sign-in (SP-initiated): GET /saml/login → IdP → POST /saml/acs. Both the response
 * and the assertion must be signed by SAML_IDP_CERT (or SAML_IDP_CERT_NEXT during a rollover); audience, Destination/Recipient, the time
 * window and InResponseTo (one of our requests, started in this browser, used once) are
 * checked. Any rejection is a 401/403 page, never a 500. We start our own session (with a fresh
 * id) from the verified profile.
 */

/** How long an AuthnRequest may wait for its response; also the acceptable assertion age. */
const REQUEST_TTL_MS = 10 * 60_000;
const CLOCK_SKEW_MS = 60_000;

type Deps = {
  env: Env;
  clock: Clock;
  sessions: AdminSessions;
  /** perAddressAllowance over SAML_LOGIN_PER_ADDRESS_PER_MINUTE (built by src/service/http.ts). */
  withinAllowance: AddressAllowance;
};

class RefusedRole extends Error {}

export function samlRouter(deps: Deps): Router {
  const { env } = deps;
  const acsUrl = env.SAML_CALLBACK_URL!;
  const rules: RoleRules = {
    attributes: parseRoleAttributes(env.SAML_ROLE_ATTRIBUTE),
    adminValues: parseRoleValues(env.SAML_ADMIN_VALUES),
    viewerValues: parseRoleValues(env.SAML_VIEWER_VALUES),
  };
  let secret: Promise<string> | undefined;
  const signingSecret = () => (secret ??= deps.sessions.getCookieSecret());
  const requestCache = new PgSamlRequestCache(deps.sessions, deps.clock, REQUEST_TTL_MS, signingSecret);
  const config: SamlConfig = {
    entryPoint: env.SAML_ENTRY_POINT!,
    issuer: env.SAML_ISSUER!,
    audience: env.SAML_ISSUER!,
    callbackUrl: acsUrl,
    // During a rollover the IdP's next certificate is accepted too (docs/saml-okta.md, docs/saml-entra.md).
    idpCert: env.SAML_IDP_CERT_NEXT
      ? [normalisePem(env.SAML_IDP_CERT!), normalisePem(env.SAML_IDP_CERT_NEXT)]
      : normalisePem(env.SAML_IDP_CERT!),
    wantAuthnResponseSigned: true,
    wantAssertionsSigned: true,
    acceptedClockSkewMs: CLOCK_SKEW_MS,
    maxAssertionAgeMs: REQUEST_TTL_MS,
    validateInResponseTo: ValidateInResponseTo.always,
    requestIdExpirationPeriodMs: REQUEST_TTL_MS,
    cacheProvider: requestCache,
    // Entra and Okta pick the authentication method (MFA, passwordless); asking for "password" breaks that.
    disableRequestedAuthnContext: true,
    signatureAlgorithm: "sha256",
  };
  if (!env.SAML_IDP_ISSUER) {
    log.warn("admin", "SAML_IDP_ISSUER is not set: any issuer signing with SAML_IDP_CERT is accepted", {
      fix: "set SAML_IDP_ISSUER to the IdP's entity id (docs/operations.md)",
    });
  }
  // node-saml directly, not passport's authenticate(): the login route only ever builds a redirect,
  // whatever the request carries, and the ACS handles one outcome per request with no callbacks.
  const saml = new SAML(config);

  /** The signed-in actor for a verified profile; throws with the reason for anything else. */
  const actorFor = async (req: Request, profile: Profile | null): Promise<AdminActor> => {
    if (!profile?.nameID) throw new Error("the assertion names no user");
    // A NameID that reads as another user's (the Kelvin sign for K, a Cyrillic а) would answer to
    // their campaign items: refused before anything is recorded (src/review/campaigns/reviewerName.ts).
    const confusable = reviewerNameProblem(profile.nameID);
    if (confusable) throw new Error(`the NameID ${confusable}`);
    checkResponseAddressing(profile, acsUrl);
    checkNameIdUncommented(profile);
    if (env.SAML_IDP_ISSUER) checkIssuer(profile, env.SAML_IDP_ISSUER);
    const inResponseTo = typeof profile.inResponseTo === "string" ? profile.inResponseTo : undefined;
    if (!startedInThisBrowser(req, inResponseTo)) throw new Error("this sign-in was not started in this browser");
    // node-saml checked InResponseTo; claiming it here makes two concurrent copies of one response fail too.
    if (!inResponseTo || !(await deps.sessions.consumeResponse(inResponseTo, deps.clock.now()))) {
      throw new Error("this response was already used");
    }
    const role = roleFromProfile(profile, rules);
    if (!role) throw new RefusedRole(profile.nameID);
    return { name: profile.nameID, role, via: "saml" };
  };

  const router = Router();

  router.get("/saml/metadata", (_req, res) => {
    res.type("application/samlmetadata+xml").send(saml.generateServiceProviderMetadata(null, null));
  });

  // Anyone may start a sign-in, and a start stores its request id (kept REQUEST_TTL_MS): within an
  // allowance per address. Past it the id is signed instead of stored, so the sign-in still works.
  const { withinAllowance } = deps;
  const notStored: CacheProvider = {
    saveAsync: async (_key, value) => ({ value, createdAt: deps.clock.now().getTime() }),
    getAsync: (key) => requestCache.getAsync(key),
    removeAsync: (key) => requestCache.removeAsync(key),
  };

  router.get("/saml/login", async (req, res) => {
    try {
      const stored = await withinAllowance(req.ip);
      // One client per request so that this request's id is known here (for the browser binding).
      const requestId = stored
        ? `_${randomBytes(20).toString("hex")}`
        : signedRequestId(await signingSecret(), deps.clock.now());
      const url = await new SAML({
        ...config,
        generateUniqueId: () => requestId,
        ...(stored ? {} : { cacheProvider: notStored }),
      }).getAuthorizeUrlAsync("", undefined, {});
      rememberLoginRequest(req, res, requestId, REQUEST_TTL_MS);
      res.redirect(302, url);
    } catch (error) {
      failedLogin(req, res, error as Error);
    }
  });

  router.post("/saml/acs", async (req: Request, res: Response) => {
    const body = req.body as Record<string, unknown> | undefined;
    const samlResponse = typeof body?.SAMLResponse === "string" ? body.SAMLResponse : undefined;
    if (!samlResponse) return failedLogin(req, res, new SamlAddressingError("no SAMLResponse was posted"));
    let actor: AdminActor;
    try {
      requireStrongAlgorithms(Buffer.from(samlResponse, "base64").toString("utf8"));
      const { profile } = await saml.validatePostResponseAsync({ SAMLResponse: samlResponse });
      actor = await actorFor(req, profile);
    } catch (error) {
      return failedLogin(req, res, error as Error);
    }
    forgetLoginRequests(req, res);
    await establishSession(req, actor);
    log.info("admin", "signed in", { actor: actorForLog(actor.name), role: actor.role, via: "saml" });
    res.redirect(303, takeReturnPath(req, res));
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
  renderMessagePage(
    res,
    401,
    "Sign-in rejected",
    `The single sign-on response was not accepted: ${error.message}. Nothing was signed in.`,
    undefined,
  );
}

/** SAML_IDP_CERT may be a PEM, a bare base64 body, or a PEM with literal "\n" (common in .env files). */
function normalisePem(value: string): string {
  return value.replace(/\\n/g, "\n").trim();
}
