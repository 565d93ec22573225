import { CronExpressionParser } from "cron-parser";
import { deleteLogOlderThan } from "../db/reconcile/logRepository.js";
import {
  claimScheduleSlot,
  finishVerifiedRun,
  getRunningRun,
  lastScheduleSlot,
  setScheduleRun,
  takeOverStaleRun,
} from "../db/reconcile/resyncRepository.js";
import { isTransientDatabaseError } from "../errors.js";
import { BackgroundLoop, LoopWorker } from "../backgroundLoop.js";
import { log } from "../logging/logger.js";
import { runVerified } from "../notify/platformEvents.js";
import { createRun, PROCESS_ID, runPlanPhase, type ResyncDeps } from "./resync.js";
import { applyRetention, type RetentionPolicy } from "./retention.js";
import { campaignPass } from "../review/campaigns/index.js";

export type SchedulerOptions = {
  /** Cron expression in UTC, or "off". */
  cron: string;
  verify: boolean;
  tickMs: number;
  logRetentionDays: number;
  /** The rest of the data retention, applied with the log's (src/jobs/retention.ts). */
  retention: RetentionPolicy;
  /** A phase-1 owner silent this long is presumed dead and its run is taken over. */
  staleAfterMs: number;
  /** Access campaigns: remind reviewers this long before the due date (0: never); what closing does with undecided items. */
  campaigns?: { remindMs: number; undecidedAction: "keep" | "revoke" };
};

/** The most recent time the schedule fired at or before `now`, or undefined for "off". Pure. */
function lastFiring(cron: string, now: Date): Date | undefined {
  if (cron.trim().toLowerCase() === "off") return undefined;
  return CronExpressionParser.parse(cron, { currentDate: now, tz: "UTC" }).prev().toDate();
}

/** Throws a readable error for a bad expression (called at boot). */
export function assertCron(cron: string): void {
  if (cron.trim().toLowerCase() === "off") return;
  try {
    CronExpressionParser.parse(cron, { tz: "UTC" });
  } catch (error) {
    throw new Error(
      `RESYNC_CRON: "${cron}" is not a cron expression (${error instanceof Error ? error.message : error}); e.g. "0 2 * * *" or "off"`,
    );
  }
}

/**
 * The scheduler role: fires the resync cron once across all replicas (the first replica to
 * insert the slot wins), resumes a run whose phase-1 owner died, closes runs whose verification
 * is done, trims the reconciliation log, and reminds and closes access campaigns at their due date.
 */
export class Scheduler extends LoopWorker {
  protected readonly loop: BackgroundLoop;
  private readonly startedAt: Date;
  private lastTrim = 0;

  constructor(
    private readonly deps: ResyncDeps,
    private readonly options: SchedulerOptions,
  ) {
    super();
    this.startedAt = deps.clock.now();
    this.loop = new BackgroundLoop({
      category: "scheduler",
      intervalMs: options.tickMs,
      pass: () => this.tick(),
      failure: (error) => ({
        message: isTransientDatabaseError(error) ? "database unavailable" : "scheduler tick failed",
      }),
    });
  }

  /** One tick: the cron, a run to resume or close, the log to trim, campaigns to remind or close. */
  async tick(): Promise<void> {
    await this.fireCron();
    await this.superviseRunningRun();
    await this.trimLog();
    if (this.options.campaigns) {
      const done = await campaignPass(this.deps, this.options.campaigns);
      if (done.reminded || done.closed) log.info("scheduler", "access campaigns reminded or closed", done);
    }
  }

  private async fireCron(): Promise<void> {
    const { db, clock } = this.deps;
    const slot = lastFiring(this.options.cron, clock.now());
    if (!slot) return;
    // Fire for a slot only once, and only for slots since this process started or the last firing:
    // a replica starting at 09:00 does not run the 02:00 resync late.
    const last = await lastScheduleSlot(db);
    if ((last && slot <= last) || slot < this.startedAt) return;
    if (!(await claimScheduleSlot(db, slot))) return;
    if (await getRunningRun(db)) {
      log.warn("scheduler", "scheduled resync skipped: one is still running", { slot: slot.toISOString() });
      return;
    }
    const runId = await createRun(this.deps, {
      dryRun: false,
      verify: this.options.verify,
      trigger: "cron",
      actor: null,
    });
    await setScheduleRun(db, slot, runId);
    void runPlanPhase(this.deps, runId).catch((error) =>
      log.error("resync", "scheduled resync failed", { runId, error }),
    );
  }

  private async superviseRunningRun(): Promise<void> {
    const { db, clock } = this.deps;
    const run = await getRunningRun(db);
    if (!run) return;
    if (run.phase === "plan" && (await takeOverStaleRun(db, run.id, PROCESS_ID, this.options.staleAfterMs))) {
      log.warn("resync", "resuming a resync whose process stopped", { runId: run.id });
      void runPlanPhase(this.deps, run.id).catch((error) =>
        log.error("resync", "resumed resync failed", { runId: run.id, error }),
      );
      return;
    }
    // The closing UPDATE is the one check that no verification is pending (finishVerifiedRun).
    if (run.phase === "verify") {
      const finished = await db.transaction(async (tx) => {
        const closed = await finishVerifiedRun(tx, run.id, clock.now());
        if (closed) await runVerified(tx, clock.now(), closed);
        return closed;
      });
      if (finished)
        log.info("resync", "resync finished", {
          runId: run.id,
          verified: finished.verified,
          drifted: finished.drifted,
        });
    }
  }

  private async trimLog(): Promise<void> {
    const now = this.deps.clock.now().getTime();
    if (now - this.lastTrim < 3_600_000) return;
    this.lastTrim = now;
    const removed = await deleteLogOlderThan(this.deps.db, new Date(now - this.options.logRetentionDays * 86_400_000));
    if (removed) log.info("scheduler", "old log entries removed", { removed });
    const retained = await applyRetention(this.deps.db, new Date(now), this.options.retention);
    if (retained.scrubbedUsers || retained.debits || retained.runs || retained.platformEvents)
      log.info("scheduler", "data retention applied", retained);
  }
}
