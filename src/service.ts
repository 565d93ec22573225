import { createServer, type Server } from "node:http";
import type { Database } from "./db/database.js";
import { systemClock, type Clock } from "./clock.js";
import { ConfigError, type Env } from "./config/env.js";
import { CONNECTION_NAMES, openDatabase } from "./db/dataSource.js";
import { createAccessReport } from "./admin/access/index.js";
import { ScimTokenVerifier } from "./auth/scimTokens.js";
import { AdminSessionRepository } from "./db/adminSessionRepository.js";
import { TokenRepository } from "./db/tokenRepository.js";
import { createAdminData } from "./admin/index.js";
import { createApp, createProbesApp } from "./http/app.js";
import { assertCron, Scheduler } from "./jobs/scheduler.js";
import { retentionPolicyFromEnv } from "./jobs/retention.js";
import { createMirrorSync } from "./mirror/index.js";
import type { MirrorSyncWorker } from "./mirror/worker.js";
import { log } from "./logging/logger.js";
import {
  budgetPolicyFromEnv,
  reconcilePoliciesFromEnv,
  createPlatformTransport,
  createReconciliation,
  type PlatformTarget,
  type Reconciliation,
} from "./reconcile/index.js";
import { MappingStore } from "./mapping/store.js";
import { PlatformQuarantine, quarantineRulesFromEnv } from "./platform/quarantine.js";
import { ServiceMetrics } from "./metrics/index.js";
import { channelsFromEnv, createNotifications, type Notifications } from "./notify/index.js";
import { readCertificate } from "./notify/conditions.js";
import { serverClasses, type ServerClasses } from "./http/serverClasses.js";
import { HttpDrain } from "./http/drain.js";
import { answerClientError } from "./http/clientError.js";

/**
 * The running service: database, HTTP server and background workers, wired together.
 * `cli/cli.ts start` starts one from the environment; integration tests start one in-process.
 */
export type Service = {
  url: string;
  db: Database;
  mappings: MappingStore;
  /** Present when a platform is configured. */
  reconciliation?: Reconciliation;
  scheduler?: Scheduler;
  mirror?: MirrorSyncWorker;
  quarantine: PlatformQuarantine;
  notifications: Notifications;
  /** The first step of a graceful shutdown: /readyz answers 503 and answers say `Connection: close`; everything keeps serving. */
  drain(): void;
  /**
   * Stops accepting, answers the requests in flight (cut off after `graceMs`; 0, the default: at
   * once), stops the workers (each finishes or releases its claim) and closes the pools.
   */
  close(options?: { graceMs?: number }): Promise<void>;
};

export type ServiceOptions = {
  env: Env;
  databaseUrl: string;
  clock?: Clock;
  /** Defaults to PLATFORM_URL and friends; without one, nothing is reconciled. */
  platform?: PlatformTarget;
  /** Run the reconcile worker in this process (default: when RECONCILE_WORKERS > 0). */
  workers?: boolean;
  /** Checks that need the migrated database before anything starts (a throw stops the boot). */
  beforeListening?: (db: Database) => Promise<void>;
};

export async function startService(options: ServiceOptions): Promise<Service> {
  const { env } = options;
  const clock = options.clock ?? systemClock;
  const mappings = await MappingStore.load(env.MAPPING_FILE); // a bad mapping stops the boot
  const platform = options.platform ?? platformFromEnv(env);
  const channels = channelsFromEnv(env); // a half-configured channel stops the boot here
  // One pool per role, each under its own application_name (docs/operations.md): the HTTP pool
  // (SCIM, admin, metrics, quarantine, notifications) is DATABASE_POOL_SIZE; the workers' pools are sized for them.
  const pools: Database[] = [];
  const openPool = async (applicationName: string, poolSize: number) => {
    const pool = await openDatabase({ url: options.databaseUrl, poolSize, applicationName });
    pools.push(pool);
    return pool;
  };
  const db = await openPool(CONNECTION_NAMES.http, env.DATABASE_POOL_SIZE);
  try {
    await bringSchemaUpToDate(db, env);
    await options.beforeListening?.(db);
  } catch (error) {
    await db.close();
    throw error;
  }
  await mappings.putInForce(db);
  const stopWatching = mappings.watch(db);

  // Shared through its table: a family one replica quarantines is paused on every replica.
  const quarantine = new PlatformQuarantine(db, clock, quarantineRulesFromEnv(env));
  const samlCertificateExpiresAt = env.SAML_IDP_CERT ? readCertificate(env.SAML_IDP_CERT)?.validTo : undefined;
  const budget = budgetPolicyFromEnv(env);
  // The worker role runs the reconcile worker, the mirror worker and the notification deliverer;
  // options.workers (tests, the CLI) says so for this process whatever ROLES says.
  const workerRole = options.workers ?? env.ROLES.has("worker");
  const metrics = new ServiceMetrics({
    db,
    clock,
    budget,
    quarantine,
    idpSilenceHours: env.IDP_SILENCE_HOURS,
    ...(samlCertificateExpiresAt ? { samlCertificateExpiresAt } : {}),
    mappingAgreement: () => mappings.agreement(db),
  });
  const onLogged = (action: string, outcome: string) => metrics.reconcileOutcomes.inc({ action, outcome });
  // One transport to the platform: the reconciler and the mirror sync share its per-family 429 pauses.
  const transport = platform && createPlatformTransport({ env, clock, platform, quarantine });
  const workerDb = platform && (await openPool(CONNECTION_NAMES.reconcileWorker, env.RECONCILE_WORKERS + 2));
  const reconciliation =
    platform && transport && workerDb
      ? createReconciliation({
          env,
          db: workerDb,
          databaseUrl: options.databaseUrl,
          clock,
          mappings,
          platform,
          transport,
          quarantine,
          onLogged,
          budget,
        })
      : undefined;
  if (!platform)
    log.warn("reconcile", "no platform configured (PLATFORM_URL): IdP changes are stored but not reconciled");
  // RECONCILE_WORKERS=0 turns the reconcile loop off, unless options.workers asks for it.
  const runWorkers =
    workerRole && (options.workers !== undefined || env.RECONCILE_WORKERS > 0) && reconciliation !== undefined;
  if (runWorkers) await reconciliation!.worker.start();

  const mirror = transport
    ? createMirrorSync({
        env: { ...env, PLATFORM_API_KEY: env.PLATFORM_API_KEY ?? platform?.apiKey },
        db: await openPool(CONNECTION_NAMES.mirrorWorker, MIRROR_POOL_SIZE),
        clock,
        transport,
        gate: quarantine,
        metrics: metrics.mirror,
      })
    : undefined;
  const runMirror = workerRole && mirror !== undefined;
  if (runMirror) mirror!.start();

  const resyncDeps = { db, clock, mappings, policies: reconcilePoliciesFromEnv(env) };
  assertCron(env.RESYNC_CRON);
  const scheduler = env.ROLES.has("scheduler")
    ? new Scheduler(
        { ...resyncDeps, db: await openPool(CONNECTION_NAMES.scheduler, SCHEDULER_POOL_SIZE) },
        {
          cron: env.RESYNC_CRON,
          verify: env.RESYNC_VERIFY,
          tickMs: env.SCHEDULER_TICK_MS,
          logRetentionDays: env.RECONCILE_LOG_RETENTION_DAYS,
          retention: retentionPolicyFromEnv(env),
          staleAfterMs: 60_000,
          campaigns: {
            remindMs: env.CAMPAIGN_REMIND_HOURS * 3_600_000,
            undecidedAction: env.CAMPAIGN_UNDECIDED_AT_CLOSE,
          },
        },
      )
    : undefined;
  scheduler?.start();

  // Every role listens: a process without `web` serves only /healthz, /readyz and /metrics there,
  // so the image's health check and Prometheus reach workers and schedulers too.
  const web = env.ROLES.has("web");
  const classes = web ? serverClasses() : undefined;
  const server = await listen(env.HOST, env.PORT, classes);
  const drain = new HttpDrain(server);
  const url = serverUrl(server, env);
  const probes = { env, db, metrics, draining: () => drain.isDraining, mappingAgreement: () => mappings.agreement(db) };
  const publicUrl = env.PUBLIC_URL?.replace(/\/$/, "") ?? url;
  // The deliverer sends from worker processes; the outbox is written by whoever changes state.
  const notifications = createNotifications({ env, db, clock, publicUrl, channels });
  if (workerRole) notifications.deliverer.start();
  const reconcileNow =
    reconciliation && ((userId: string, actor: string) => reconciliation.worker.reconcileNow(userId, actor));
  const resync = { deps: resyncDeps, cron: env.RESYNC_CRON, verify: env.RESYNC_VERIFY };
  const admin = createAdminData({
    db,
    clock,
    budget,
    mappings,
    mappingFile: env.MAPPING_FILE,
    reconcileNow,
    resync,
    quarantine,
    notifications,
  });
  const access = createAccessReport({ db, mappingFile: env.MAPPING_FILE });
  const app = createApp({
    env,
    db,
    clock,
    publicUrl,
    adminApi: {
      budget,
      access,
      mappingFile: env.MAPPING_FILE,
      ...(env.EVIDENCE_SIGNING_KEY ? { evidenceSigningKey: env.EVIDENCE_SIGNING_KEY } : {}),
      campaignUndecidedAtClose: env.CAMPAIGN_UNDECIDED_AT_CLOSE,
      reconcileNow: admin.apiReconcileNow,
      resync: resyncDeps,
      quarantine,
      notifications,
      onMirrorRequeue: () => mirror?.notify(),
    },
    adminSources: { ...admin.sources, access },
    adminSessions: new AdminSessionRepository(db),
    scimTokens: new ScimTokenVerifier(new TokenRepository(db), env.SCIM_TOKEN),
    adminActions: admin.actions,
    metrics,
    draining: probes.draining,
    mappingAgreement: probes.mappingAgreement,
  });
  classes?.adopt(app.express);
  server.on("request", drain.wrap(web ? app : createProbesApp(probes)));
  log.info("http", web ? "listening" : "listening for health checks and metrics only (no web role)", { url });

  return {
    url,
    db,
    mappings,
    reconciliation,
    scheduler,
    mirror,
    quarantine,
    notifications,
    drain() {
      drain.begin();
    },
    async close({ graceMs = 0 } = {}) {
      stopWatching();
      await scheduler?.stop();
      const { cutOff } = await drain.close(graceMs);
      if (cutOff) log.warn("http", "requests still running at the shutdown deadline were cut off", { graceMs });
      await reconciliation?.worker.stop();
      await mirror?.stop();
      await notifications.deliverer.stop();
      await quarantine.settled();
      for (const pool of pools) await pool.close();
    },
  };
}

/**
 * Migrates (MIGRATE_AT_BOOT, the default), or with a migration Job in charge checks that the
 * schema is at least what this version needs and stops the boot with what to run when it is not.
 */
async function bringSchemaUpToDate(db: Database, env: Env): Promise<void> {
  if (env.MIGRATE_AT_BOOT) {
    const applied = await db.migrate(() => log.info("db", "another process is migrating the database; waiting for it"));
    if (applied.length) log.info("db", "migrations applied", { migrations: applied });
    return;
  }
  const pending = await db.pendingMigrations();
  if (pending.length)
    throw new ConfigError([
      `MIGRATE_AT_BOOT=false and the database schema is older than this version needs (pending: ${pending.join(", ")}): ` +
        "run `scim-connector migrate` with this version (the migration Job) and start again, or set MIGRATE_AT_BOOT=true.",
    ]);
}

/** The mirror worker's cycle runs its batch kinds side by side; the scheduler ticks one at a time. */
const MIRROR_POOL_SIZE = 5;
const SCHEDULER_POOL_SIZE = 2;

/** PLATFORM_URL with its credentials, or undefined when no platform is configured. */
function platformFromEnv(env: Env): PlatformTarget | undefined {
  if (!env.PLATFORM_URL) return undefined;
  const missing = (["PLATFORM_SCIM_TOKEN", "PLATFORM_REQUEST_ORIGIN"] as const).filter((name) => !env[name]);
  if (missing.length) throw new ConfigError(missing.map((name) => `${name}: required when PLATFORM_URL is set`));
  return {
    url: env.PLATFORM_URL,
    scimToken: env.PLATFORM_SCIM_TOKEN!,
    apiKey: env.PLATFORM_API_KEY,
    requestOrigin: env.PLATFORM_REQUEST_ORIGIN!,
  };
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
