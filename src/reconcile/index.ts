import type { Database } from "../db/database.js";
import type { Clock } from "../clock.js";
import type { Env } from "../config/env.js";
import { WorkerLease } from "../db/reconcile/workerLease.js";
import type { HttpTransport } from "../platform/transport.js";
import type { PlatformTarget } from "../platform/target.js";
import type { PlatformQuarantine } from "../platform/quarantine.js";
import { PlatformScimClient } from "../platform/scim.js";
import { budgetPolicy, type BudgetPolicy } from "./budget/budget.js";
import { MappedDesiredState } from "./desiredSource.js";
import type { DesiredAccess } from "../mapping/desiredAccess.js";
import type { Policies } from "./planner.js";
import { Reconciler } from "./reconciler.js";
import type { ReconcilerDeps } from "./pass.js";
import { ReconcileWorker } from "./worker.js";

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

/** Builds the reconciler and its worker for one process (the worker is started by the caller). */
export function createReconciliation(options: {
  env: Env;
  db: Database;
  databaseUrl: string;
  clock: Clock;
  /** The desired state every replica shares (src/mapping/desiredAccess.ts), built once per service. */
  desired: DesiredAccess;
  platform: PlatformTarget;
  /** The process's platform transport (platform/target.ts createPlatformTransport). */
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
    source: new MappedDesiredState(db, options.desired, { clock }),
    budget,
    policies: reconcilePoliciesFromEnv(env),
    breaker: { minimum: env.DEPROVISION_BREAKER_MIN, percent: env.DEPROVISION_BREAKER_PERCENT },
    drift: env.RESYNC_DRIFT,
    outsideChanges: env.PLATFORM_OUTSIDE_CHANGES,
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
