import type { Database } from "../db/database.js";
import type { Clock } from "../clock.js";
import type { Env } from "../config/env.js";
import { WorkerLease } from "../db/workerLease.js";
import { HttpTransport, type HttpOutcome } from "../platform/transport.js";
import type { PlatformQuarantine } from "../platform/quarantine.js";
import { PlatformScimClient } from "../platform/scim.js";
import { budgetPolicy, type BudgetPolicy } from "./budget.js";
import { MappedDesiredState } from "./desiredSource.js";
import type { MappingStore } from "../mapping/store.js";
import type { Policies } from "./planner.js";
import { Reconciler } from "./reconciler.js";
import type { ReconcilerDeps } from "./pass.js";
import { ReconcileWorker } from "./worker.js";

/** Where the connector sends SCIM calls: the platform, or the emulator standing in for it. */
export type PlatformTarget = { url: string; scimToken: string; apiKey: string | undefined; requestOrigin: string };

export function budgetPolicyFromEnv(env: Env): BudgetPolicy {
  return budgetPolicy(
    env.PLATFORM_SCIM_DAILY_BUDGET,
    env.PLATFORM_SCIM_BUDGET_RESERVE_PERCENT,
    env.PLATFORM_SCIM_BUDGET_WINDOW,
    env.RESYNC_VERIFY_HEADROOM_PERCENT,
  );
}

/** The planner's policies as configured (the service, the resync and the CLI plan alike). */
export function reconcilePoliciesFromEnv(env: Env): Policies {
  return {
    onEmailChange: env.RECONCILE_ON_EMAIL_CHANGE,
    deprovisionGraceMs: env.RECONCILE_DEPROVISION_GRACE_MS,
    onAdoptedDeprovision: env.RECONCILE_ON_ADOPTED_DEPROVISION,
  };
}

export type Reconciliation = { reconciler: Reconciler; worker: ReconcileWorker; budget: BudgetPolicy };

/**
 * The one HTTP transport of this process to the platform (its per-family 429 pauses are shared by
 * the reconciler and the mirror sync); every outcome is reported to the quarantine.
 */
export function createPlatformTransport(options: {
  env: Pick<Env, "PLATFORM_TIMEOUT_MS">;
  clock: Clock;
  platform: PlatformTarget;
  quarantine?: PlatformQuarantine;
}): HttpTransport {
  const { quarantine } = options;
  const observe = quarantine && ((family: string, outcome: HttpOutcome) => quarantine.observe(family, outcome));
  return new HttpTransport({
    baseUrl: options.platform.url,
    timeoutMs: options.env.PLATFORM_TIMEOUT_MS,
    clock: options.clock,
    ...(observe ? { observe } : {}),
  });
}

/** Builds the reconciler and its worker for one process (the worker is started by the caller). */
export function createReconciliation(options: {
  env: Env;
  db: Database;
  databaseUrl: string;
  clock: Clock;
  mappings: MappingStore;
  platform: PlatformTarget;
  /** The process's platform transport (createPlatformTransport). */
  transport: HttpTransport;
  /** Gates the worker's claims (see platform/quarantine.ts). */
  quarantine?: PlatformQuarantine;
  /** Told of each reconciliation-log entry the reconciler writes (metrics). */
  onLogged?: ReconcilerDeps["onLogged"];
  /** The process's budget policy (service.ts builds it once); from the environment when not given. */
  budget?: BudgetPolicy;
}): Reconciliation {
  const { env, db, clock, quarantine, transport } = options;
  const scim = new PlatformScimClient({
    transport,
    scimToken: options.platform.scimToken,
    requestOrigin: options.platform.requestOrigin,
  });
  const budget = options.budget ?? budgetPolicyFromEnv(env);
  const reconciler = new Reconciler({
    db,
    clock,
    platform: scim,
    source: new MappedDesiredState(db, options.mappings, { clock }),
    budget,
    policies: reconcilePoliciesFromEnv(env),
    breaker: { minimum: env.DEPROVISION_BREAKER_MIN, percent: env.DEPROVISION_BREAKER_PERCENT },
    drift: env.RESYNC_DRIFT,
    ...(options.onLogged ? { onLogged: options.onLogged } : {}),
  });
  const lease = new WorkerLease(options.databaseUrl, ["reconcile_queue"]);
  const worker = new ReconcileWorker(db, clock, reconciler, lease, budget, {
    concurrency: Math.max(1, env.RECONCILE_WORKERS),
    pollMs: env.RECONCILE_POLL_MS,
    classifyBatch: 500,
    settle: { settleMs: env.RECONCILE_SETTLE_MS, maxMs: env.RECONCILE_SETTLE_MAX_MS },
    ...(quarantine ? { gate: quarantine } : {}),
  });
  return { reconciler, worker, budget };
}
