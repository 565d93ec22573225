import type { Database, Queryable } from "../db/database.js";
import type { Clock } from "../clock.js";
import {
  claimNext,
  claimUser,
  completeQueueRow,
  deferQueueRow,
  dropIfUnchanged,
  listUnclassified,
  markUsersDirty,
  parkQueueRow,
  releaseClaim,
  requeueQueueRow,
  setPriority,
  type QueueRow,
} from "../db/reconcile/queueRepository.js";
import type { WorkerLease } from "../db/reconcile/workerLease.js";
import { getBudgetStatus } from "./budget/budgetLedger.js";
import { nextUtcMidnight, type BudgetPolicy } from "./budget/budget.js";
import { BackgroundLoop } from "../backgroundLoop.js";
import { isTransientDatabaseError } from "../errors.js";
import { log } from "../logging/logger.js";
import type { QuarantineGate } from "../platform/quarantine.js";
import { SCIM_FAMILY } from "../platform/scim.js";
import { retryDelayMs, type ReconcileResult } from "./outcomes.js";
import { PRIORITY, priorityOf } from "./planner.js";
import type { Reconciler } from "./reconciler.js";
import { settleDeadline, waitsToSettle, type SettlePolicy } from "./settle.js";

export type WorkerOptions = {
  /** Reconciles in flight at once in this process. */
  concurrency: number;
  /** Longest idle wait between queue checks (a NOTIFY wakes the worker sooner). */
  pollMs: number;
  classifyBatch: number;
  /** Grants from the IdP wait for the user to be quiet (src/reconcile/settle.ts); settleMs 0 turns it off. */
  settle?: SettlePolicy;
  /** The platform quarantine: while the SCIM family is quarantined no row is claimed (they wait in the queue). */
  gate?: QuarantineGate;
};

/**
 * The reconcile loop: classify newly dirty users (free: no platform calls), then claim the most
 * urgent ready user and reconcile it; apply the result to its queue row (done, retry with backoff,
 * wait for the platform or the budget, or park). Several loops per process, several processes per
 * database: claims go through the queue table, so each row is worked by one loop at a time.
 */
export class ReconcileWorker {
  private readonly loops: BackgroundLoop;
  private unsubscribe: (() => void) | undefined;
  /** The classification in flight: one loop reads and plans a burst; the others wait for it, then claim. */
  private classifying: Promise<number> | undefined;
  /** Claims given up on an error (user id → lease id): released before the next claim. */
  private readonly abandoned = new Map<string, number>();

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly reconciler: Reconciler,
    private readonly lease: WorkerLease,
    private readonly budget: BudgetPolicy,
    private readonly options: WorkerOptions,
  ) {
    this.loops = new BackgroundLoop({
      category: "reconcile",
      intervalMs: options.pollMs,
      concurrency: options.concurrency,
      // Found work: look again at once, and wake one more loop in case there is more to share.
      pass: async () => {
        if (!(await this.runOnce())) return undefined;
        this.loops.wakeOne();
        return 0;
      },
      failure: (error) =>
        isTransientDatabaseError(error)
          ? { message: "database unavailable; retrying", retryInMs: 2_000 }
          : { message: "worker loop error", retryInMs: 5_000 },
    });
  }

  async start(): Promise<void> {
    if (this.loops.running) return;
    await this.lease.start();
    // A NOTIFY wakes one loop: it classifies the burst and wakes the others to claim.
    this.unsubscribe = this.lease.onNotify(() => this.loops.wakeOne());
    this.loops.start();
  }

  async stop(): Promise<void> {
    await this.loops.stop();
    this.unsubscribe?.();
    await this.lease.stop();
  }

  /** Wakes every idle loop now. */
  nudge(): void {
    this.loops.wake();
  }

  /** Provision on demand: mark, claim and reconcile this user now, ahead of the queue. */
  async reconcileNow(userId: string, actor: string): Promise<ReconcileResult | "busy"> {
    if (!(await this.lease.ensure())) return "busy";
    // Marked and claimed in one transaction, so no other worker can take the row in between.
    const row = await this.claiming(async (tx, leaseId) => {
      await markUsersDirty(tx, [userId], { kind: "admin", actor });
      return claimUser(tx, leaseId, userId, this.clock.now());
    });
    if (!row) return "busy";
    return this.work(row, actor);
  }

  /** One pass of classification and at most one reconcile; true when it found work. For tests and the CLI. */
  async runOnce(): Promise<boolean> {
    if (!(await this.lease.ensure())) return false;
    await this.releaseAbandoned();
    const classified = await this.classify();
    // Quarantined: classifying is free and goes on; claiming would spend budget on failing calls.
    const admission = this.options.gate ? await this.options.gate.admit(SCIM_FAMILY) : "open";
    if (admission === "closed") return classified > 0;
    const now = this.clock.now();
    // Verification runs on spare budget only: live changes always go first, and it never touches
    // the reserve nor the headroom kept for changes later in the window.
    const spare = (await getBudgetStatus(this.db, this.budget, now)).spareForVerification > 0;
    const row = await this.claimNext(now, spare ? PRIORITY.verify : PRIORITY.verify - 1);
    try {
      if (row) await this.work(row, null);
    } finally {
      // Half-open: this reconcile's first platform call decided; an unused probe goes back.
      if (admission === "probe") await this.options.gate!.probeFinished(SCIM_FAMILY);
    }
    return classified > 0 || row !== undefined;
  }

  /**
   * Classifies, or waits for the classification another loop has in flight (its failure is that
   * loop's to log): a claim only ever follows a whole classified batch, so a wave of deprovisions
   * is seen whole by the breaker. Rows filed ready wake the idle loops to claim them.
   */
  private async classify(): Promise<number> {
    if (this.classifying) {
      await this.classifying.catch(() => 0);
      return 0;
    }
    this.classifying = this.classifyBatch().finally(() => (this.classifying = undefined));
    const classified = await this.classifying;
    if (classified > 0) this.loops.wake();
    return classified;
  }

  /**
   * Plans newly dirty users and files them by priority; drops the ones that need nothing. A grant
   * from the IdP is filed to go out once the user has been quiet for the settle window: each new
   * change marks the row again, so it is classified again here and the window restarts.
   */
  private async classifyBatch(): Promise<number> {
    const rows = await listUnclassified(this.db, this.options.classifyBatch);
    const now = this.clock.now();
    const settle = this.options.settle;
    const budgetResetsAt = this.budget.window === "utc-day" ? nextUtcMidnight(now) : null;
    for (const row of rows) {
      const { plan } = await this.reconciler.plan(row.userId);
      const priority = priorityOf(plan);
      // A change made on the platform by someone else is checked at once, as the reduction it may be.
      if (plan.action === "none" && row.platformCheck)
        await setPriority(this.db, row, PRIORITY.reduction, "platform-check");
      else if (plan.action === "none" && row.verifyRun) await setPriority(this.db, row, PRIORITY.verify, "verify");
      else if (plan.action === "none") await dropIfUnchanged(this.db, row);
      else {
        const until =
          settle && waitsToSettle(plan, row.trigger, row.verifyRun)
            ? settleDeadline({ now, burstStartedAt: row.burstStartedAt, policy: settle, budgetResetsAt })
            : null;
        // Free work (forget, holds) is filed first: it costs no budget. A stripped account's
        // delete is filed for when its grace ends (the row is the pending delete), unless a
        // resync asked to verify the account: that check runs now (access put back by hand is
        // taken away again at once), and the row then waits for the grace's end.
        await setPriority(this.db, row, priority ?? PRIORITY.deprovision, plan.action, {
          ...(until ? { settle: { until, burstStartedAt: row.burstStartedAt ?? now } } : {}),
          ...(plan.action === "await-delete" && !row.verifyRun ? { notBefore: plan.deleteAfter } : {}),
        });
      }
    }
    return rows.length;
  }

  private claimNext(now: Date, maxPriority: number): Promise<QueueRow | undefined> {
    return this.claiming((tx, leaseId) => claimNext(tx, leaseId, now, maxPriority));
  }

  /**
   * Claims in a transaction, reading the claimed row before the COMMIT: when the connection is
   * lost after the claim committed but before its answer came back, the row is known and given
   * back on the next pass (a claim under a live lease would otherwise wait for a restart). A
   * connection lost before the COMMIT claimed nothing: the transaction rolled back.
   */
  private async claiming(
    claim: (tx: Queryable, leaseId: number) => Promise<QueueRow | undefined>,
  ): Promise<QueueRow | undefined> {
    const leaseId = this.lease.id;
    let claimed: QueueRow | undefined;
    try {
      return await this.db.transaction(async (tx) => (claimed = await claim(tx, leaseId)));
    } catch (error) {
      if (claimed) this.abandoned.set(claimed.userId, leaseId);
      throw error;
    }
  }

  /**
   * A statement that failed (a dropped connection, a deadlock) leaves the row claimed under this
   * worker's lease, which may well live on: without giving the claim back, the row would wait
   * for a restart. Released on the next pass, when the database answers again.
   */
  private async work(row: QueueRow, actor: string | null): Promise<ReconcileResult> {
    const leaseId = this.lease.id;
    try {
      return await this.workClaimed(row, actor);
    } catch (error) {
      this.abandoned.set(row.userId, leaseId);
      throw error;
    }
  }

  private async releaseAbandoned(): Promise<void> {
    for (const [userId, leaseId] of [...this.abandoned]) {
      // Taken off first, so no other loop releases it again once it may have been claimed anew.
      if (!this.abandoned.delete(userId)) continue;
      try {
        await releaseClaim(this.db, userId, leaseId);
      } catch (error) {
        this.abandoned.set(userId, leaseId);
        throw error;
      }
    }
  }

  private async workClaimed(row: QueueRow, actor: string | null): Promise<ReconcileResult> {
    let result: ReconcileResult;
    try {
      const options = { queuedAt: row.queuedAt, platformCheck: row.platformCheck };
      result = row.verifyRun
        ? await this.reconciler.verifyAndReconcile(row.userId, row.trigger, row.verifyRun, actor, options)
        : await this.reconciler.reconcile(row.userId, row.trigger, actor, options);
    } catch (error) {
      if (isTransientDatabaseError(error)) throw error; // the claim is given back (work); another pass retries
      result = { kind: "retry", error: error instanceof Error ? error.message : String(error) };
      log.error("reconcile", "reconcile threw", { error });
    }
    const now = this.clock.now();
    switch (result.kind) {
      case "done":
        await completeQueueRow(this.db, row);
        break;
      case "requeue":
        // Marked again meanwhile: classified anew instead (the planner finds the pending delete itself).
        if (!(await requeueQueueRow(this.db, row, result.at, result.action ?? "await-delete")))
          await completeQueueRow(this.db, row);
        break;
      case "retry":
        await deferQueueRow(this.db, row.userId, new Date(now.getTime() + retryDelayMs(row.attempts)), {
          error: result.error,
        });
        break;
      case "rate_limited":
        await deferQueueRow(this.db, row.userId, result.until);
        break;
      case "budget":
        await deferQueueRow(this.db, row.userId, result.resetsAt);
        break;
      case "terminal":
        await parkQueueRow(this.db, row.userId, result.error, now);
        break;
    }
    return result;
  }
}
