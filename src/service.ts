import type { Database } from "./db/database.js";
import { systemClock, type Clock } from "./clock.js";
import type { Env } from "./config/env.js";
import { MappingStore } from "./mapping/store.js";
import { DesiredAccess } from "./mapping/desiredAccess.js";
import { AnnouncedLimitWatch } from "./platform/announcedLimit.js";
import { PlatformQuarantine, quarantineRulesFromEnv } from "./platform/quarantine.js";
import { ServiceMetrics } from "./metrics/index.js";
import { channelsFromEnv, createNotifications, type Notifications } from "./notify/index.js";
import { readCertificate } from "./notify/conditions.js";
import { budgetPolicyFromEnv, type Reconciliation } from "./reconcile/index.js";
import type { PlatformTarget } from "./platform/target.js";
import type { Scheduler } from "./jobs/scheduler.js";
import type { MirrorSyncWorker } from "./mirror/worker.js";
import type { UnmanagedDiscovery } from "./platformRecord/discovery.js";
import type { PlatformExportPoller } from "./platformRecord/exportPoller.js";
import { openPools, platformFromEnv } from "./service/pools.js";
import { startWorkers } from "./service/workers.js";
import { listenHttp } from "./service/http.js";

/**
 * The running service: database, HTTP server and background workers, wired together.
 * `cli/start.ts` `start` starts one from the environment; integration tests start one in-process.
 */
export type Service = {
  url: string;
  db: Database;
  /** This replica's mapping file (reload, putInForce). */
  mappings: MappingStore;
  /** The mapping in force, which every replica shares, and each user's desired access: what every surface asks. */
  desired: DesiredAccess;
  /** Present when a platform is configured. */
  reconciliation?: Reconciliation;
  scheduler?: Scheduler;
  mirror?: MirrorSyncWorker;
  /** The lowest lane's lookups of accounts made by hand (present when a platform is configured). */
  discovery?: UnmanagedDiscovery;
  /** The daily Security Event export's poller, in the scheduler role (tests poll it at once). */
  exportPoller?: PlatformExportPoller;
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
  // A bad mapping stops the boot; so does a template's placeholder in production.
  const mappings = await MappingStore.load(env.MAPPING_FILE, { refusePlaceholder: env.NODE_ENV === "production" });
  const platform = options.platform ?? platformFromEnv(env);
  const channels = channelsFromEnv(env); // a half-configured channel stops the boot here
  const pools = await openPools(options); // the HTTP pool, migrated and checked (beforeListening)
  const { db } = pools;
  await mappings.putInForce(db);
  const stopWatching = mappings.watch(db);
  // The one reader of the mapping in force (mapping_state): reconcile, resync, pages, access review.
  const desired = new DesiredAccess(mappings);

  // Shared through its table: a family one replica quarantines is paused on every replica.
  const quarantine = new PlatformQuarantine(db, clock, quarantineRulesFromEnv(env));
  const samlCertificateExpiresAt = env.SAML_IDP_CERT ? readCertificate(env.SAML_IDP_CERT)?.validTo : undefined;
  const budget = budgetPolicyFromEnv(env);
  const announcedLimit = new AnnouncedLimitWatch(db, clock, budget.limit);
  const metrics = new ServiceMetrics({
    db,
    clock,
    budget,
    quarantine,
    idpSilenceHours: env.IDP_SILENCE_HOURS,
    ...(samlCertificateExpiresAt ? { samlCertificateExpiresAt } : {}),
    mappingAgreement: () => desired.agreement(db),
  });
  const shared = { env, clock, desired, quarantine, metrics, budget };

  const workers = await startWorkers({
    ...shared,
    databaseUrl: options.databaseUrl,
    platform,
    pools,
    announcedLimit,
    workers: options.workers,
  });
  const http = await listenHttp(env);
  const notifications = createNotifications({ env, db, clock, publicUrl: http.publicUrl, channels });
  workers.startDeliverer(notifications);
  http.serve({ ...shared, db, notifications, workers });

  return {
    url: http.url,
    db,
    mappings,
    desired,
    reconciliation: workers.reconciliation,
    scheduler: workers.scheduler,
    mirror: workers.mirror,
    discovery: workers.discovery,
    exportPoller: workers.exportPoller,
    quarantine,
    notifications,
    drain() {
      http.drain();
    },
    // The scheduler first (no new run starts), then the server (requests in flight answered), then
    // the workers (each finishes or releases its claim), the quarantine's writes, the pools.
    async close({ graceMs = 0 } = {}) {
      stopWatching();
      await workers.stopScheduler();
      await http.close(graceMs);
      await workers.stop();
      await quarantine.settled();
      await announcedLimit.settled();
      await pools.close();
    },
  };
}
