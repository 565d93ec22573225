import type { Clock } from "../clock.js";
import type { Database } from "../db/database.js";
import type { Env } from "../config/env.js";
import { CONNECTION_NAMES } from "../db/dataSource.js";
import type { ResyncDeps } from "../jobs/resync.js";
import { retentionPolicyFromEnv } from "../jobs/retention.js";
import { assertCron, Scheduler } from "../jobs/scheduler.js";
import { log } from "../logging/logger.js";
import type { DesiredAccess } from "../mapping/desiredAccess.js";
import type { ServiceMetrics } from "../metrics/index.js";
import { createMirrorSync } from "../mirror/index.js";
import type { MirrorSyncWorker } from "../mirror/worker.js";
import type { Notifications } from "../notify/index.js";
import type { AnnouncedLimitWatch } from "../platform/announcedLimit.js";
import type { PlatformQuarantine } from "../platform/quarantine.js";
import type { BudgetPolicy } from "../reconcile/budget/budget.js";
import { createReconciliation, reconcilePoliciesFromEnv, type Reconciliation } from "../reconcile/index.js";
import { createPlatformTransport, type PlatformTarget } from "../platform/target.js";
import { PlatformScimClient } from "../platform/scim.js";
import { noRetry, type HttpTransport } from "../platform/transport.js";
import { UnmanagedDiscovery } from "../platformRecord/discovery.js";
import type { Findings } from "../platformRecord/events.js";
import { createPlatformRecordAnalysis } from "../platformRecord/index.js";
import type { Pools } from "./pools.js";
import { createExportPoller, type PlatformExportPoller } from "../platformRecord/exportPoller.js";
import { platformImportOptions } from "../platformRecord/importer.js";

export type WorkersDeps = {
  env: Env;
  databaseUrl: string;
  clock: Clock;
  /** The mapping in force and each user's desired access (service.ts builds it once). */
  desired: DesiredAccess;
  /** Without one, nothing is reconciled or mirrored. */
  platform: PlatformTarget | undefined;
  pools: Pools;
  quarantine: PlatformQuarantine;
  /** Told of the SCIM family's answers: the limit the platform announces. */
  announcedLimit: AnnouncedLimitWatch;
  metrics: ServiceMetrics;
  budget: BudgetPolicy;
  /** Run the workers in this process whatever ROLES says (tests, the CLI). */
  workers: boolean | undefined;
};

/** The background side of the service: the reconcile worker, the mirror worker, the scheduler and the notification deliverer. */
export type Workers = {
  reconciliation?: Reconciliation;
  mirror?: MirrorSyncWorker;
  scheduler?: Scheduler;
  /** The platform's daily Security Event export, read in the scheduler role (SECURITY_EVENTS_S3_URI). */
  exportPoller?: PlatformExportPoller;
  /** The lowest lane: one lookup per account made by hand (src/platformRecord/discovery.ts). */
  discovery?: UnmanagedDiscovery;
  /** What every import of the platform's record runs after storing its events (src/platformRecord/index.ts). */
  analysePlatformRecord: () => Promise<Findings>;
  /** What a resync reads and writes, shared by the scheduler and the admin surfaces. */
  resyncDeps: ResyncDeps;
  /** Takes the notifications (made once the server's URL is known) and starts their deliverer in the worker role. */
  startDeliverer(notifications: Notifications): void;
  stopScheduler(): Promise<void>;
  /** Stops the reconcile worker, the mirror worker and the deliverer; each finishes or releases its claim. */
  stop(): Promise<void>;
};

/** The mirror worker's cycle runs its batch kinds side by side; the scheduler ticks one at a time. */
const MIRROR_POOL_SIZE = 5;
const SCHEDULER_POOL_SIZE = 2;

/** Builds the workers and starts those this process's roles run: reconcile worker, mirror worker, scheduler, in that order. */
export async function startWorkers(deps: WorkersDeps): Promise<Workers> {
  const { env, clock, desired, platform, pools, quarantine, announcedLimit, metrics, budget } = deps;
  // The worker role runs the reconcile worker, the mirror worker and the notification deliverer;
  // deps.workers (tests, the CLI) says so for this process whatever ROLES says.
  const workerRole = deps.workers ?? env.ROLES.has("worker");
  const onLogged = (action: string, outcome: string) => metrics.reconcileOutcomes.inc({ action, outcome });
  // One transport to the platform: the reconciler and the mirror sync share its per-family 429 pauses.
  const transport = platform && createPlatformTransport({ env, clock, platform, quarantine, announcedLimit });
  const workerDb = platform && (await pools.open(CONNECTION_NAMES.reconcileWorker, env.RECONCILE_WORKERS + 2));
  const reconciliation =
    platform && transport && workerDb
      ? createReconciliation({
          env,
          db: workerDb,
          databaseUrl: deps.databaseUrl,
          clock,
          desired,
          platform,
          transport,
          quarantine,
          onLogged,
          budget,
        })
      : undefined;
  if (!platform)
    log.warn("reconcile", "no platform configured (PLATFORM_URL): IdP changes are stored but not reconciled");
  // RECONCILE_WORKERS=0 turns the reconcile loop off, unless deps.workers asks for it.
  const runWorkers =
    workerRole && (deps.workers !== undefined || env.RECONCILE_WORKERS > 0) && reconciliation !== undefined;
  if (runWorkers) await reconciliation!.worker.start();

  const mirror = transport
    ? createMirrorSync({
        env: { ...env, PLATFORM_API_KEY: env.PLATFORM_API_KEY ?? platform?.apiKey },
        db: await pools.open(CONNECTION_NAMES.mirrorWorker, MIRROR_POOL_SIZE),
        clock,
        transport,
        gate: quarantine,
        metrics: metrics.mirror,
      })
    : undefined;
  const runMirror = workerRole && mirror !== undefined;
  if (runMirror) mirror!.start();

  const discovery =
    transport && platform && workerDb ? createDiscovery(deps, transport, platform, workerDb) : undefined;
  // Like the reconcile loop: the worker role runs it, and RECONCILE_WORKERS=0 turns it off unless deps.workers asks.
  if (runWorkers) discovery?.start();

  const resyncDeps = { db: pools.db, clock, desired, policies: reconcilePoliciesFromEnv(env) };
  assertCron(env.RESYNC_CRON);
  const scheduler = env.ROLES.has("scheduler")
    ? new Scheduler(
        { ...resyncDeps, db: await pools.open(CONNECTION_NAMES.scheduler, SCHEDULER_POOL_SIZE) },
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
  const analysePlatformRecord = createPlatformRecordAnalysis({
    env,
    db: pools.db,
    clock,
    desired,
    onCandidate: () => discovery?.notify(),
  });
  const exportPoller = env.ROLES.has("scheduler")
    ? createExportPoller(env, { ...platformImportOptions(env), db: pools.db, clock, analyse: analysePlatformRecord })
    : undefined;
  exportPoller?.start();

  let notifications: Notifications | undefined;
  return {
    reconciliation,
    mirror,
    scheduler,
    exportPoller,
    discovery,
    analysePlatformRecord,
    resyncDeps,
    startDeliverer(made) {
      notifications = made;
      // The deliverer sends from worker processes; the outbox is written by whoever changes state.
      if (workerRole) notifications.deliverer.start();
    },
    async stopScheduler() {
      await scheduler?.stop();
      await exportPoller?.stop();
    },
    async stop() {
      await reconciliation?.worker.stop();
      await discovery?.stop();
      await mirror?.stop();
      await notifications?.deliverer.stop();
    },
  };
}

/** The discovery lane, on the reconcile worker's pool and the process's one transport; its lookups are never retried. */
function createDiscovery(
  deps: WorkersDeps,
  transport: HttpTransport,
  platform: PlatformTarget,
  db: Database,
): UnmanagedDiscovery {
  const scim = new PlatformScimClient({
    transport,
    scimToken: platform.scimToken,
    requestOrigin: platform.requestOrigin,
    retry: noRetry,
  });
  return new UnmanagedDiscovery({
    db,
    clock: deps.clock,
    budget: deps.budget,
    platform: scim,
    lookupsPerDay: deps.env.UNMANAGED_LOOKUPS_PER_DAY,
    pollMs: deps.env.UNMANAGED_LOOKUP_POLL_MS,
    gate: deps.quarantine,
  });
}
