/**
 * What every step of one reconcile pass shares: the pass's own record (`ReconcilePass`: who, what it
 * spent, the last status, for the log; named apart from a resync run, whose id it may carry as
 * `resyncRunId`), the budget debit before each request (`spend`), the log entries
 * (`write`, `fail`, `hold`) and what an answer teaches (`learnFrom`, `lookup`). The executors
 * (execute/writes.ts, execute/removals.ts), the verification (verify.ts) and the loop (reconciler.ts)
 * build on it.
 */
import type { Database, Queryable } from "../db/database.js";
import type { Clock } from "../clock.js";
import { debitBudget } from "./budget/budgetLedger.js";
import { createHold, deleteHold } from "../db/reconcile/holdRepository.js";
import type { DirtyTrigger, FailedOutcome, LogAction, LogOutcome } from "../vocabulary/reconcile.js";
import { logWords } from "../db/reconcile/logWords.js";
import { writeLogEntry } from "../db/reconcile/logRepository.js";
import { log } from "../logging/logger.js";
import type { ExplainedGrant } from "../mapping/reasons.js";
import type { DesiredDashboardUser } from "../mapping/types.js";
import type { HttpOutcome } from "../platform/transport.js";
import { budgetRefused, holdSettled, holdsChanged } from "../notify/reconcileEvents.js";
import type { BudgetPolicy, SpendKind } from "./budget/budget.js";
import type { BreakerPolicy } from "./breaker.js";
import type { Change } from "./diff.js";
import { legacyStringsIn, type Equivalents } from "../mapping/granular.js";
import type { PlatformAccount as AnsweredAccount } from "../platform/scim.js";
import { LegacyGate } from "./legacyGate.js";
import { errorDetail, resultOfFailure, type ReconcileResult } from "./outcomes.js";
import type { Policies } from "./planner.js";
import { BudgetExhausted, type BeforeSend, type DesiredStateSource, type PlatformScimPort } from "./ports.js";

export type ReconcilerDeps = {
  db: Database;
  clock: Clock;
  platform: PlatformScimPort;
  source: DesiredStateSource;
  budget: BudgetPolicy;
  policies: Policies;
  breaker: BreakerPolicy;
  /** What verification does with drift: put back what was applied, or only report it. */
  drift: "enforce" | "report";
  /**
   * What a change made on the platform by someone else leads to (src/reconcile/platformCheck.ts):
   * put back what the mapping grants, or keep it and show it. Absent: revert.
   */
  outsideChanges?: "revert" | "report";
  /** Told of each log entry written (the reconcile-outcome metric). */
  onLogged?: (action: LogAction, outcome: LogOutcome) => void;
};

/** One reconcile of one user: everything it learned and spent, for the log. */
export type ReconcilePass = {
  userId: string;
  reconcileId: string;
  /** The full resync this work belongs to, if any (its calls are counted for that run). */
  resyncRunId: string | null;
  /** What marked the user (copied into the log); a resync trigger names the resync run its calls count for. */
  trigger: DirtyTrigger;
  actor: string | null;
  userName: string | null;
  before: DesiredDashboardUser | null;
  /** Why the desired state has each grant (stored with the entry that applies it). */
  reasons?: () => ExplainedGrant[];
  /** Why the user should have no account, in words (for a strip or a deprovision). */
  why?: string;
  calls: number;
  lastStatus: number | null;
  /** When the user was first queued since its last reconcile (for an IdP change, when the IdP sent it). */
  queuedAt: Date | null;
  /** The mapping's `vocabulary.equivalents` (a reduction the platform refuses in legacy terms is sent translated). */
  equivalents?: Equivalents;
  /** An account made by hand that a campaign revoked (unmanagedRemoval.ts): no account of the connector's to record. */
  unmanaged?: boolean;
};

/**
 * The reconciler's shared tools, built once per reconciler and handed to each executor
 * (execute/writes.ts, execute/removals.ts) and to the reads before a plan (verify.ts,
 * platformCheck.ts); every call takes the pass it works for.
 */
export class PassTools {
  readonly legacy: LegacyGate;

  constructor(readonly deps: ReconcilerDeps) {
    this.legacy = new LegacyGate(deps.db, deps.clock);
  }

  /** `byId`: the identifiers the desired state names things by, so the answer compares with it. */
  async lookup(
    pass: ReconcilePass,
    userName: string,
    byId?: ReadonlySet<string>,
  ): Promise<{ match: { id: string; user: DesiredDashboardUser } | undefined } | ReconcileResult> {
    const outcome = await this.deps.platform.findUserByUserName(userName, this.spend(pass, "lookup", "ordinary"));
    this.note(pass, outcome);
    if (outcome.kind !== "ok") return resultOfFailure(outcome);
    const match = this.deps.platform
      .readList(outcome.body, byId)
      .find((r) => r.user.userName.toLowerCase() === userName.toLowerCase());
    if (match) await this.learnFrom(match, null);
    return { match };
  }

  /** Whether a write of `desired` must not go out: it carries legacy strings the platform refuses. */
  async heldForLegacy(desired: DesiredDashboardUser): Promise<boolean> {
    return legacyStringsIn(desired).length > 0 && (await this.legacy.refusesLegacy());
  }

  /**
   * Keeps a grant the platform refuses for its legacy strings on the queue (`held-legacy`), spending
   * nothing more; the mapping change that removes them marks the user again and it goes out.
   */
  async holdForLegacy(
    pass: ReconcilePass,
    action: LogAction,
    changes: Change[],
    outcome?: HttpOutcome,
  ): Promise<ReconcileResult> {
    const refusedNow = outcome?.kind === "http_error" ? ` (${outcome.status}: ${errorDetail(outcome.body)})` : "";
    await this.write(pass, action, "held", changes, {
      note: `held: the platform refuses legacy permission strings${refusedNow}; this grant goes out once the mapping is migrated (scim-connector mapping migrate FILE --write)`,
    });
    return {
      kind: "requeue",
      at: new Date(this.deps.clock.now().getTime() + HELD_LEGACY_RECHECK_MS),
      action: "held-legacy",
    };
  }

  /** What an answer teaches (identifiers, model); a granular write that succeeded ends a refusal incident. */
  async learnFrom(answered: AnsweredAccount, sent: DesiredDashboardUser | null): Promise<void> {
    await this.legacy.learn(answered);
    if (sent && legacyStringsIn(sent).length === 0 && sent.permissionModel === "granular")
      await this.legacy.noteGranularApplied();
  }

  /**
   * Holds an action for an admin: the hold, its log entry and the approval.required incident (opened
   * or updated) in one transaction, so an admin never sees (and approves) a hold the log does not show
   * yet, and a crash leaves all or none.
   */
  async hold(
    pass: ReconcilePass,
    hold: Parameters<typeof createHold>[1],
    entry: { action: "hold" | "needs-admin"; changes: Change[]; note: string },
  ): Promise<void> {
    await this.deps.db.transaction(async (tx) => {
      await createHold(tx, hold);
      await holdsChanged(tx, hold.now);
      // The log's chain head is this transaction's last lock (src/db/auditChain.ts).
      await this.write(pass, entry.action, "held", entry.changes, { note: entry.note }, tx);
    });
  }

  /** The IdP made a held action moot: drop the hold; the last one resolves approval.required. */
  async dropHold(userId: string): Promise<void> {
    await this.deps.db.transaction(async (tx) => {
      await deleteHold(tx, userId);
      await holdSettled(tx, this.deps.clock.now(), { decision: "withdrawn", by: "the IdP" });
    });
  }

  /** The budget debit that runs just before a request leaves; `then` runs after a successful debit. */
  spend(pass: ReconcilePass, action: string, kind: SpendKind, then?: () => Promise<void>): BeforeSend {
    return async () => {
      const debit = await debitBudget(
        this.deps.db,
        this.deps.budget,
        this.deps.clock.now(),
        {
          action,
          kind,
          userId: pass.userId,
          reconcileId: pass.reconcileId,
          ...(pass.resyncRunId ? { runId: pass.resyncRunId } : {}),
        },
        kind === "verify"
          ? undefined
          : (tx, refused) => budgetRefused(tx, this.deps.clock.now(), this.deps.budget, { ...refused, kind }),
      );
      if (!debit.ok) throw new BudgetExhausted(debit.resetsAt);
      pass.calls++;
      await then?.();
    };
  }

  note(pass: ReconcilePass, outcome: HttpOutcome): void {
    pass.lastStatus = "status" in outcome && typeof outcome.status === "number" ? outcome.status : pass.lastStatus;
  }

  async fail(
    pass: ReconcilePass,
    action: LogAction,
    changes: Change[],
    result: ReconcileResult,
    outcome?: HttpOutcome,
  ): Promise<ReconcileResult> {
    const error =
      "error" in result
        ? result.error
        : result.kind === "rate_limited"
          ? `rate limited until ${result.until.toISOString()}`
          : result.kind;
    const detail = outcome && outcome.kind === "http_error" ? errorDetail(outcome.body) : undefined;
    await this.write(
      pass,
      action,
      result.kind === "rate_limited" || result.kind === "retry" ? "retrying" : "failed",
      changes,
      {
        error: detail && !error.includes(detail) ? `${error}: ${detail}` : error,
      },
    );
    log.warn("reconcile", "reconcile failed", { action, result: result.kind, status: pass.lastStatus });
    return result;
  }

  /** The entry for a desired state now held by the platform, with the rules and groups that give each grant. */
  writeApplied(
    pass: ReconcilePass,
    action: LogAction,
    changes: Change[],
    desired: DesiredDashboardUser,
  ): Promise<void> {
    return this.write(pass, action, "succeeded", changes, { after: desired, reasons: pass.reasons?.() ?? null });
  }

  /**
   * Writes the pass's log entry, on `db` or in the caller's transaction `tx`: an entry that failed
   * (or will be retried) says why in `error`, any other says what an admin should know in `note`.
   */
  async write(
    pass: ReconcilePass,
    action: LogAction,
    outcome: FailedOutcome,
    changes: Change[],
    extra: Applied & { error?: string },
    tx?: Queryable,
  ): Promise<void>;
  async write(
    pass: ReconcilePass,
    action: LogAction,
    outcome: Exclude<LogOutcome, FailedOutcome>,
    changes: Change[],
    extra: Applied & { note?: string },
    tx?: Queryable,
  ): Promise<void>;
  async write(
    pass: ReconcilePass,
    action: LogAction,
    outcome: LogOutcome,
    changes: Change[],
    extra: Applied & { error?: string; note?: string },
    tx: Queryable = this.deps.db,
  ): Promise<void> {
    await writeLogEntry(tx, {
      ...logWords(outcome, extra.error ?? extra.note),
      at: this.deps.clock.now(),
      reconcileId: pass.reconcileId,
      userId: pass.userId,
      userName: pass.userName,
      action,
      trigger: pass.trigger,
      changes,
      before: pass.before,
      after: extra.after,
      reasons: extra.reasons,
      platformStatus: pass.lastStatus,
      callsSpent: pass.calls,
      actor: pass.actor,
      queuedAt: pass.queuedAt,
    });
    this.deps.onLogged?.(action, outcome);
    pass.calls = 0; // each entry reports the calls spent since the previous one
  }
}

/** What an entry for a state applied (or observed) carries beside its words. */
type Applied = { after?: DesiredDashboardUser | null; reasons?: ExplainedGrant[] | null };

/** A held grant is tried again after a day at most (a mapping change releases it at once). */
const HELD_LEGACY_RECHECK_MS = 24 * 3_600_000;
