import type { PlatformRecord } from "../platformRecord/frontDoor.js";
import type { Evidence } from "../review/evidence/frontDoor.js";
import type { Campaigns } from "../review/campaigns/frontDoor.js";
import type { ScimDirectory } from "../scim/frontDoor.js";
import type { IncomingMessage, ServerResponse } from "node:http";
import express, { type Express } from "express";
import proxyAddr from "proxy-addr";
import type { AdminSessions } from "../admin/sessions.js";
import type { ScimTokenVerifier } from "../auth/scimTokens.js";
import type { Clock } from "../clock.js";
import type { Env } from "../config/env.js";
import { adminApiRouter, type AdminApiDeps } from "./admin/api/index.js";
import { adminRouter, type AdminActions, type AdminDataSources } from "./admin/index.js";
import type { ServiceMetrics } from "../metrics/index.js";
import type { MappingAgreement } from "../mapping/desiredAccess.js";
import type { AddressAllowance, AuthThrottles } from "../auth/authThrottle.js";
import type { OAuthTokenService } from "../auth/oauth/tokenService.js";
import type { AuthorizationCodes } from "../auth/oauth/authorizationCode.js";
import { healthRouter, type DatabaseProbe } from "./health.js";
import { oauthRouter } from "./oauth/index.js";
import { metricsRouter } from "./metrics.js";
import { requestContext } from "./requestContext.js";
import { scimServer, scimTarget } from "./scim/index.js";
import type { Catalogue } from "../mapping/compiled.js";
import type { ScimRoutes } from "./scim/routes.js";
import { finalErrorHandler, notFound } from "./surfaceErrors.js";

/** What the HTTP layer needs from the rest of the process. Routers take only the parts they use. */
export type AppDeps = {
  env: Env;
  /** What /readyz asks of the database: that it answers and is migrated. */
  databaseProbe: DatabaseProbe;
  clock: Clock;
  /** The externally visible base URL (for SCIM `meta.location`), without a trailing slash. */
  publicUrl: string;
  /** The admin JSON API's collaborators (budget policy, reconcile-now, resync, quarantine, notifications, mirror). */
  adminApi: Omit<AdminApiDeps, "adminToken" | "throttle" | "platformRecord" | "evidence" | "campaigns">;
  adminSources: AdminDataSources;
  /** Access campaigns: the JSON API's and the pages' (src/review/campaigns/frontDoor.ts). */
  campaigns: Campaigns;
  /** The evidence packs: the JSON API's and the Access review page's (src/review/evidence/frontDoor.ts). */
  evidence: Evidence;
  /** The platform's record: the JSON API's and the admin page's imports and unmanaged accounts. */
  platformRecord: PlatformRecord;
  /** The admin UI's sessions (src/db/auth/adminSessionRepository.ts). */
  adminSessions: AdminSessions;
  /** The SCIM server's user, group and search commands (src/scim/frontDoor.ts). */
  scimDirectory: ScimDirectory;
  /** The IdP credentials the SCIM server checks: bearer tokens and OAuth access tokens. */
  scimTokens: ScimTokenVerifier;
  /** The OAuth token endpoint's grants (/oauth/token). */
  oauthTokens?: OAuthTokenService;
  /** The authorization code grant, approved on the admin UI's page. */
  oauthCodes?: AuthorizationCodes;
  adminActions: AdminActions;
  /** Each surface's failed-auth throttle (src/auth/authThrottle.ts), built once by src/service/http.ts. */
  throttles: AuthThrottles;
  /** GET /admin/saml/login's per-address allowance for storing its request ids. */
  samlLoginAllowance: AddressAllowance;
  /** Records that the IdP spoke (idp.silent, src/notify/conditions.ts); the SCIM server calls it once authenticated. */
  noteIdpActivity: () => void;
  /** Served at /metrics (METRICS_TOKEN or loopback only); also times /scim/v2 requests. */
  metrics?: ServiceMetrics;
  /** True once the process is shutting down: /readyz answers 503. */
  draining?: () => boolean;
  /** Whether this replica's mapping file is the mapping in force (/readyz detail). */
  mappingAgreement?: () => Promise<MappingAgreement>;
  /** The mapping's catalogue in force, for /Roles, /Entitlements and the users' assignments. */
  catalogue?: () => Promise<Catalogue>;
};

/**
 * The request handler the HTTP server runs (a function, like an Express app), with the two servers
 * behind it: `express` (every surface but SCIM) and `scimRoutes` (the SCIM server's route table).
 */
export type App = ((req: IncomingMessage, res: ServerResponse) => void) & {
  readonly express: Express;
  readonly scimRoutes: ScimRoutes;
};

/**
 * Every request gets its context (id, log context, request line, latency) first. Requests under
 * /scim/v2 then go to the SCIM server, which runs on node:http alone (src/http/scim/index.ts);
 * everything else goes to the Express app.
 */
export function createApp(deps: AppDeps): App {
  const app = expressApp(deps);
  const trust = app.get("trust proxy fn") as Parameters<typeof proxyAddr>[1];
  const scim = scimServer({ ...deps, throttle: deps.throttles.scim, clientAddress: (req) => proxyAddr(req, trust) });
  const begin = requestContext(deps.metrics);
  const handle = (req: IncomingMessage, res: ServerResponse): void =>
    begin(req, res, () => {
      const at = scimTarget(req.url ?? "");
      if (at) scim.serve(req, res, at);
      else app(req, res);
    });
  return Object.assign(handle, { express: app, scimRoutes: scim.routes });
}

function expressApp(deps: AppDeps): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", deps.env.TRUST_PROXY);
  app.use(healthRouter(deps.databaseProbe, deps.draining, deps.mappingAgreement));
  if (deps.metrics) app.use(metricsRouter(deps.metrics, deps.env.METRICS_TOKEN));
  if (deps.oauthTokens) app.use("/oauth", oauthRouter({ tokens: deps.oauthTokens, throttle: deps.throttles.oauth }));
  app.use(
    "/admin/api",
    adminApiRouter({
      ...deps.adminApi,
      platformRecord: deps.platformRecord,
      evidence: deps.evidence,
      campaigns: deps.campaigns,
      adminToken: deps.env.ADMIN_TOKEN,
      throttle: deps.throttles.adminApi,
    }),
  );
  app.use(
    "/admin",
    adminRouter({
      ...deps,
      sessions: deps.adminSessions,
      sources: deps.adminSources,
      actions: deps.adminActions,
      loginThrottle: deps.throttles.adminLogin,
    }),
  );
  app.use(notFound);
  app.use(finalErrorHandler);
  return app;
}

/**
 * What a process without the `web` role serves: /healthz, /readyz and /metrics (the same routers,
 * with their context and their 404), so the image's health check and the scraper reach every role.
 */
export function createProbesApp(
  deps: Pick<AppDeps, "env" | "databaseProbe" | "metrics" | "draining" | "mappingAgreement">,
): (req: IncomingMessage, res: ServerResponse) => void {
  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", deps.env.TRUST_PROXY);
  app.use(healthRouter(deps.databaseProbe, deps.draining, deps.mappingAgreement));
  if (deps.metrics) app.use(metricsRouter(deps.metrics, deps.env.METRICS_TOKEN));
  app.use(notFound);
  app.use(finalErrorHandler);
  const begin = requestContext(deps.metrics);
  return (req, res) => begin(req, res, () => app(req, res));
}
