import { createServer, type Server } from "node:http";
import type { Clock } from "../clock.js";
import type { Env } from "../config/env.js";
import type { Database } from "../db/database.js";
import { AdminSessionRepository } from "../db/auth/adminSessionRepository.js";
import { TokenRepository } from "../db/auth/tokenRepository.js";
import { OAuthRepository } from "../db/auth/oauthRepository.js";
import { assertionIssuerFromEnv, ClientAssertionVerifier } from "../auth/oauth/clientAssertion.js";
import { OAuthTokenService } from "../auth/oauth/tokenService.js";
import { AuthorizationCodes } from "../auth/oauth/authorizationCode.js";
import { OAuthGrantRepository } from "../db/auth/oauthGrantRepository.js";
import { createAccessReport } from "../review/access/index.js";
import { createAdminData } from "../admin/index.js";
import { createMirrorAdmin } from "../admin/mirror.js";
import { createResyncs } from "../admin/runs/resyncs.js";
import { createAdminApiOperations } from "../admin/apiOperations.js";
import { ScimTokenVerifier } from "../auth/scimTokens.js";
import { failedAuthThrottle, perAddressAllowance, type AuthSurface } from "../auth/authThrottle.js";
import { idpActivityNoter } from "../notify/conditions.js";
import { createApp, createProbesApp, type AppDeps } from "../http/app.js";
import { platformImportOptions } from "../platformRecord/importer.js";
import { createPlatformRecord } from "../platformRecord/frontDoor.js";
import { createEvidence } from "../review/evidence/frontDoor.js";
import { createCampaigns } from "../review/campaigns/frontDoor.js";
import { createScimDirectory } from "../scim/frontDoor.js";
import { answerClientError } from "../http/clientError.js";
import { HttpDrain } from "../http/drain.js";
import { serverClasses, type ServerClasses } from "../http/serverClasses.js";
import { log } from "../logging/logger.js";
import type { DesiredAccess } from "../mapping/desiredAccess.js";
import type { ServiceMetrics } from "../metrics/index.js";
import type { Notifications } from "../notify/index.js";
import type { PlatformQuarantine } from "../platform/quarantine.js";
import type { BudgetPolicy } from "../reconcile/budget/budget.js";
import type { Workers } from "./workers.js";

/** The listening server, before it serves anything: its URL is known, so the notifications' links can be made. */
export type HttpListener = {
  url: string;
  /** PUBLIC_URL when set, else the listen URL: what links in notifications and pages point at. */
  publicUrl: string;
  /** /readyz answers 503 and answers say `Connection: close`; everything keeps serving. */
  drain(): void;
  /** Stops accepting and answers the requests in flight, cut off after `graceMs`. */
  close(graceMs: number): Promise<void>;
  /** Hands the server its request handler: the whole app with the `web` role, else only the probes and /metrics. */
  serve(deps: HttpDeps): void;
};

type HttpDeps = {
  env: Env;
  db: Database;
  clock: Clock;
  desired: DesiredAccess;
  budget: BudgetPolicy;
  quarantine: PlatformQuarantine;
  metrics: ServiceMetrics;
  notifications: Notifications;
  workers: Workers;
};

/**
 * Every role listens: a process without `web` serves only /healthz, /readyz and /metrics there,
 * so the image's health check and Prometheus reach workers and schedulers too.
 */
export async function listenHttp(env: Env): Promise<HttpListener> {
  const web = env.ROLES.has("web");
  const classes = web ? serverClasses() : undefined;
  const server = await listen(env.HOST, env.PORT, classes);
  const drain = new HttpDrain(server);
  const url = serverUrl(server, env);
  const publicUrl = env.PUBLIC_URL?.replace(/\/$/, "") ?? url;
  // The address bound, as the banner says it (0.0.0.0:8080), beside the URL to call from this machine.
  log.info("http", web ? "listening" : "listening for health checks and metrics only (no web role)", {
    address: boundAddress(server),
    url,
  });
  return {
    url,
    publicUrl,
    drain() {
      drain.begin();
    },
    async close(graceMs) {
      const { cutOff } = await drain.close(graceMs);
      if (cutOff) log.warn("http", "requests still running at the shutdown deadline were cut off", { graceMs });
    },
    serve(deps) {
      const { env, db, desired } = deps;
      const probes = {
        env,
        databaseProbe: db,
        metrics: deps.metrics,
        draining: () => drain.isDraining,
        mappingAgreement: () => desired.agreement(db),
      };
      const app = createWebApp(deps, publicUrl, probes);
      classes?.adopt(app.express);
      server.on("request", web ? app : createProbesApp(probes));
    },
  };
}

/** The whole app: SCIM, the admin UI and its JSON API over the same src/admin functions, /metrics and the probes. */
function createWebApp(deps: HttpDeps, publicUrl: string, probes: Pick<AppDeps, "draining" | "mappingAgreement">) {
  const { env, db, clock, budget, desired, quarantine, notifications, workers } = deps;
  const { reconciliation, resyncDeps, mirror } = workers;
  const reconcileNow =
    reconciliation && ((userId: string, actor: string) => reconciliation.worker.reconcileNow(userId, actor));
  const resync = createResyncs({
    job: resyncDeps,
    budget,
    cron: env.RESYNC_CRON,
    verify: env.RESYNC_VERIFY,
  });
  const admin = createAdminData({
    db,
    clock,
    budget,
    desired,
    mappingFile: env.MAPPING_FILE,
    reconcileNow,
    resync,
    quarantine,
    notifications,
  });
  const access = createAccessReport({ db, desired });
  return createApp({
    env,
    databaseProbe: db,
    clock,
    publicUrl,
    adminApi: {
      operations: createAdminApiOperations({ db, clock, budget, desired }),
      access,
      reconcileNow: admin.apiReconcileNow,
      resync,
      quarantine,
      notifications,
      mirror: createMirrorAdmin({ db, clock, onRequeue: () => mirror?.notify() }),
    },
    adminSources: { ...admin.sources, access },
    adminSessions: new AdminSessionRepository(db),
    campaigns: createCampaigns({ db, clock, undecidedAtClose: env.CAMPAIGN_UNDECIDED_AT_CLOSE }),
    evidence: createEvidence({
      db,
      clock,
      mappingFile: env.MAPPING_FILE,
      ...(env.EVIDENCE_SIGNING_KEY ? { signingKey: env.EVIDENCE_SIGNING_KEY } : {}),
    }),
    // One platform record for the JSON API and the page, each import analysed as the poller's are.
    platformRecord: createPlatformRecord({
      ...platformImportOptions(env),
      db,
      clock,
      analyse: workers.analysePlatformRecord,
    }),
    scimDirectory: createScimDirectory(db),
    // The verifier judges access tokens' expiry by the service's clock (a ManualClock in tests).
    scimTokens: new ScimTokenVerifier(new TokenRepository(db), env.SCIM_TOKEN, { now: () => clock.now().getTime() }),
    ...oauthServices(env, db, clock),
    ...httpMechanisms({ db, env, clock, metrics: deps.metrics }),
    adminActions: admin.actions,
    metrics: deps.metrics,
    draining: probes.draining,
    mappingAgreement: probes.mappingAgreement,
    // The one in force (every replica's), else this file's while this version cannot read that one.
    catalogue: () => desired.shown(db).then((shown) => shown.mapping.catalogue),
  });
}

/** The stateful mechanisms the HTTP surfaces use, which `createApp` takes ready-made. */
export type HttpMechanisms = Pick<AppDeps, "throttles" | "samlLoginAllowance" | "noteIdpActivity">;

/**
 * The mechanisms the HTTP surfaces keep over the database, built once per process here (src/http
 * builds nothing from the database handle): each surface's failed-auth throttle, the SAML sign-in's
 * per-address allowance, and the note that the IdP spoke. test/support builds its routers' from here too.
 */
export function httpMechanisms(deps: {
  db: Database;
  env: Env;
  clock: Clock;
  metrics?: ServiceMetrics;
}): HttpMechanisms {
  const { db, env, clock, metrics } = deps;
  const throttle = (surface: AuthSurface) => failedAuthThrottle(db, env, surface, metrics);
  return {
    throttles: {
      scim: throttle("scim"),
      adminApi: throttle("admin-api"),
      adminLogin: throttle("admin-login"),
      oauth: throttle("oauth"),
    },
    samlLoginAllowance: perAddressAllowance(db, {
      name: "saml-login",
      perMinute: env.SAML_LOGIN_PER_ADDRESS_PER_MINUTE,
    }),
    noteIdpActivity: idpActivityNoter(db, clock), // idp.silent (src/notify/conditions.ts)
  };
}

function oauthServices(env: Env, db: Database, clock: Clock) {
  const issuer = assertionIssuerFromEnv(env);
  const repository = new OAuthRepository(db);
  const oauthCodes = new AuthorizationCodes(repository, new OAuthGrantRepository(db), clock);
  const oauthTokens = new OAuthTokenService({
    repository,
    clock,
    accessTokenMinutes: env.OAUTH_ACCESS_TOKEN_MINUTES,
    assertions: issuer && new ClientAssertionVerifier(issuer, clock),
    assertionClientName: env.OAUTH_JWT_CLIENT_ID,
    codes: oauthCodes,
    refreshTokenDays: env.OAUTH_REFRESH_TOKEN_DAYS,
  });
  return { oauthTokens, oauthCodes };
}

function boundAddress(server: Server): string | undefined {
  const address = server.address();
  if (typeof address !== "object" || !address) return undefined;
  return `${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}`;
}

function serverUrl(server: Server, env: Env): string {
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : env.PORT;
  const host = env.HOST === "0.0.0.0" || env.HOST === "::" ? "127.0.0.1" : env.HOST;
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}

async function listen(host: string, port: number, classes: ServerClasses | undefined): Promise<Server> {
  const server = classes
    ? createServer({ IncomingMessage: classes.IncomingMessage, ServerResponse: classes.ServerResponse })
    : createServer();
  server.keepAliveTimeout = 65_000;
  server.on("clientError", answerClientError);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
