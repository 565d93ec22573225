import { randomUUID } from "node:crypto";
import type { Database, Queryable } from "../db/database.js";
import type { Clock } from "../clock.js";
import { debitBudget } from "./budgetLedger.js";
import { countUndecidedHolds, createHold, deleteHold, getHold, type Hold } from "../db/holdRepository.js";
import { clearVerification, countVerified } from "../db/resyncRepository.js";
import {
  countAccounts,
  countStripsToDeleteSince,
  getAccount,
  markCreating,
  markVerified,
  recordApplied,
  removeAccount,
  type PlatformAccount,
} from "../db/platformAccountRepository.js";
import { countPendingDeprovisions } from "../db/reconcileQueueRepository.js";
import type { DirtyTrigger, LogAction, LogOutcome } from "./vocabulary.js";
import { countDeprovisionsSince, writeLogEntry } from "../db/reconcileLogRepository.js";
import { log, withLogContext } from "../logging/logger.js";
import type { ExplainedGrant } from "../mapping/reasons.js";
import type { DesiredDashboardUser } from "../mapping/types.js";
import type { HttpOutcome } from "../platform/http.js";
import { budgetRefused, holdSettled, holdsChanged } from "../notify/events.js";
import type { BudgetPolicy, SpendKind } from "./budget.js";
import { shouldHoldDeprovision, type BreakerPolicy } from "./breaker.js";
import { diffDashboardUsers, diffInSameTerms, type Change } from "./diff.js";
import { legacyStringsIn, toGranular, type Equivalents } from "../mapping/granular.js";
import { identifierKeysOf, type PlatformAccount as AnsweredAccount } from "../platform/scim.js";
import { LegacyGate } from "./legacyGate.js";
import { errorDetail, provablyNotApplied, resultOfFailure, type ReconcileResult } from "./outcomes.js";
import { PRIORITY, planReconcile, type DeprovisionReason, type Plan, type Policies } from "./planner.js";
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
  /** Told of each log entry written (the reconcile-outcome metric). */
  onLogged?: (action: LogAction, outcome: LogOutcome) => void;
};

/** What the reconciler would do for one user right now, and what it decided from. */
export type UserPlan = {
  plan: Plan;
  account: PlatformAccount | undefined;
  desired: DesiredDashboardUser | null;
  /** Why `desired` has each grant, computed on demand (for the log entry that applies it). */
  reasons: (() => ExplainedGrant[]) | undefined;
  /** The IdP userName, or null when the IdP user no longer exists. */
  userName: string | null;
  /** The mapping's `vocabulary.equivalents`. */
  equivalents: Equivalents;
  /** Whether the IdP user is active (undefined when it no longer exists). */
  active: boolean | undefined;
  hold: Hold | undefined;
};

/**
 * The reconciler's plan for a user, spending nothing and calling nothing: what `reconcile` acts
 * on, the worker's classification and `scim-connector plan` (which has no platform to call).
 */
export async function planUser(
  deps: Pick<ReconcilerDeps, "db" | "source" | "policies" | "clock">,
  userId: string,
): Promise<UserPlan> {
  const [state, account, hold] = await Promise.all([
    deps.source.load(userId),
    getAccount(deps.db, userId),
    getHold(deps.db, userId),
  ]);
  return {
    plan: planReconcile(state.desired, account, deps.policies, {
      now: deps.clock.now(),
      idpDeleted: !state.exists,
      equivalents: state.equivalents ?? {},
    }),
    equivalents: state.equivalents ?? {},
    account,
    desired: state.desired,
    reasons: state.reasons,
    userName: state.userName,
    active: state.active,
    hold,
  };
}

/** One reconcile of one user: everything it learned and spent, for the log. */
type Run = {
  userId: string;
  reconcileId: string;
  /** The full resync this work belongs to, if any (its calls are counted for the run). */
  runId: string | null;
  /** What marked the user (copied into the log); a resync trigger names the run its calls count for. */
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
};

/**
 * Reconcile(user): read the IdP state and the last applied state, compute the desired dashboard
 * user, and do the least on the platform. Each platform request is debited from the shared
 * budget just before it is sent (`spend`). Never branches on what woke it.
 */
export class Reconciler {
  private readonly legacy: LegacyGate;

  constructor(private readonly deps: ReconcilerDeps) {
    this.legacy = new LegacyGate(deps.db, deps.clock);
  }

  /** The plan for a user as things stand, spending nothing (classification, previews). */
  plan(userId: string): Promise<UserPlan> {
    return planUser(this.deps, userId);
  }

  /** Reads the user and its account, then writes the difference. */
  reconcile(
    userId: string,
    trigger: DirtyTrigger,
    actor: string | null = null,
    options: { queuedAt?: Date | null } = {},
  ): Promise<ReconcileResult> {
    return this.reconcileOne(userId, trigger, actor, options.queuedAt ?? null, null);
  }

  /**
   * A resync's verification (`verifyRun`, on spare budget only): reads the account on the platform
   * first and logs any drift, then reconciles as `reconcile` does. The worker chooses it for a
   * queue row that carries a verification.
   */
  verifyAndReconcile(
    userId: string,
    trigger: DirtyTrigger,
    verifyRun: string,
    actor: string | null = null,
    options: { queuedAt?: Date | null } = {},
  ): Promise<ReconcileResult> {
    return this.reconcileOne(userId, trigger, actor, options.queuedAt ?? null, verifyRun);
  }

  private async reconcileOne(
    userId: string,
    trigger: DirtyTrigger,
    actor: string | null,
    queuedAt: Date | null,
    verifyRun: string | null,
  ): Promise<ReconcileResult> {
    const reconcileId = randomUUID();
    return withLogContext({ reconcileId }, async () => {
      const runId = verifyRun ?? runIdOf(trigger);
      const unverified = verifyRun ? await this.verify(userId, verifyRun, reconcileId, trigger) : undefined;
      const { plan, account, hold, reasons, active, equivalents } = await this.plan(userId);
      if (unverified) {
        // No spare budget to verify: a pending change goes ahead (its PUT or DELETE sets the whole
        // account anyway); an account with nothing to change waits for spare budget.
        if (unverified.kind !== "budget" || plan.action === "none") return unverified;
        await clearVerification(this.deps.db, userId);
      }
      const run: Run = {
        userId,
        reconcileId,
        trigger,
        actor,
        runId,
        userName: account?.userName ?? null,
        before: account?.lastApplied ?? null,
        ...(reasons ? { reasons } : {}),
        why: active === undefined ? "deleted in the IdP" : active ? "no mapped group left" : "deactivated in the IdP",
        calls: 0,
        lastStatus: null,
        queuedAt,
        equivalents,
      };
      if ("desired" in plan && plan.desired) run.userName = plan.desired.userName;
      try {
        return await this.execute(run, plan, account, hold);
      } catch (error) {
        if (error instanceof BudgetExhausted) {
          await this.write(run, actionOf(plan), "deferred-for-budget", changesOf(plan), { error: error.message });
          return { kind: "budget", resetsAt: error.resetsAt };
        }
        throw error;
      }
    });
  }

  private async execute(
    run: Run,
    plan: Plan,
    account: PlatformAccount | undefined,
    hold: Hold | undefined,
  ): Promise<ReconcileResult> {
    if (hold && !KEEPS_HOLD.has(plan.action)) await this.dropHold(run.userId);
    switch (plan.action) {
      case "none":
        return { kind: "done" };
      case "forget":
        await removeAccount(this.deps.db, run.userId);
        return { kind: "done" };
      case "rebase":
        await recordApplied(this.deps.db, run.userId, plan.platformId, plan.desired, this.deps.clock.now());
        await this.write(run, "update", "succeeded", [], {
          after: plan.desired,
          reasons: run.reasons?.() ?? null,
          error:
            "re-based to granular permissions, nothing sent: the account holds in legacy terms exactly what the mapping grants",
        });
        return { kind: "done" };
      case "create":
        return this.create(run, plan.desired, plan.changes);
      case "resolve-create":
        return this.resolveCreate(run, account!, plan.desired);
      case "update":
        return this.update(run, plan.platformId, plan.desired, plan.changes, plan.reduction);
      case "strip":
        return this.strip(run, plan, hold);
      case "await-delete":
        // Never early: the row comes back when the grace ends (a restart keeps it: it is the queue row).
        return { kind: "requeue", at: plan.deleteAfter };
      case "deprovision":
        return this.deprovisionGuarded(run, plan.platformId, plan.changes, hold, plan.reason);
      case "recreate":
        return this.recreate(run, plan, hold);
      case "email-change":
        return this.emailChange(run, plan, hold);
    }
  }

  private async create(run: Run, desired: DesiredDashboardUser, changes: Change[]): Promise<ReconcileResult> {
    const { db, clock } = this.deps;
    if (await this.heldForLegacy(desired)) return this.holdForLegacy(run, "create", changes);
    // The account is marked 'creating' only once the request is affordable and about to leave.
    const beforeSend = this.spend(run, "create", "ordinary", () =>
      markCreating(db, run.userId, desired.userName, clock.now()),
    );
    const outcome = await this.deps.platform.createUser(desired, beforeSend);
    this.note(run, outcome);
    if (outcome.kind === "ok") {
      const created = this.deps.platform.readResource(outcome.body, identifierKeysOf(desired));
      if (!created) return this.fail(run, "create", changes, { kind: "retry", error: "create answered without an id" });
      await this.learnFrom(created, desired);
      await recordApplied(db, run.userId, created.id, desired, clock.now(), { createdByConnector: true });
      await this.writeApplied(run, "create", changes, desired);
      return { kind: "done" };
    }
    if (outcome.kind === "http_error" && outcome.status === 409) {
      await removeAccount(db, run.userId);
      return this.adopt(run, desired, false);
    }
    if (provablyNotApplied(outcome)) await removeAccount(db, run.userId);
    if (await this.legacy.noteIfRefused(outcome, desired)) return this.holdForLegacy(run, "create", changes, outcome);
    return this.fail(run, "create", changes, resultOfFailure(outcome), outcome);
  }

  /** An account with this userName exists on the platform: take its id, and PUT only if it differs. */
  private async adopt(run: Run, desired: DesiredDashboardUser, createdByConnector: boolean): Promise<ReconcileResult> {
    const found = await this.lookup(run, desired.userName, identifierKeysOf(desired));
    if ("kind" in found) return this.fail(run, "adopt", [], found);
    if (!found.match)
      return this.fail(run, "adopt", [], {
        kind: "retry",
        error: "platform reported a conflict but the lookup found no account",
      });
    return this.applyToFound(run, found.match, desired, createdByConnector, "adopt");
  }

  private async applyToFound(
    run: Run,
    found: { id: string; user: DesiredDashboardUser },
    desired: DesiredDashboardUser,
    createdByConnector: boolean,
    action: LogAction,
  ): Promise<ReconcileResult> {
    const { db, clock } = this.deps;
    const changes = diffInSameTerms(found.user, desired, run.equivalents ?? {});
    run.before = found.user;
    if (changes.length) {
      const outcome = await this.deps.platform.replaceUser(found.id, desired, this.spend(run, "update", "ordinary"));
      this.note(run, outcome);
      if (outcome.kind !== "ok") return this.fail(run, action, changes, resultOfFailure(outcome), outcome);
    }
    await recordApplied(db, run.userId, found.id, desired, clock.now(), { createdByConnector, verified: true });
    await this.writeApplied(run, action, changes, desired);
    return { kind: "done" };
  }

  /** A create's answer was lost: find out by lookup whether it happened, never by a second POST. */
  private async resolveCreate(
    run: Run,
    account: PlatformAccount,
    desired: DesiredDashboardUser | null,
  ): Promise<ReconcileResult> {
    const found = await this.lookup(run, account.userName, identifierKeysOf(desired));
    if ("kind" in found) return this.fail(run, desired ? "create" : "deprovision", [], found);
    if (found.match) {
      if (desired && desired.userName.toLowerCase() === account.userName.toLowerCase())
        return this.applyToFound(run, found.match, desired, true, "create");
      await recordApplied(this.deps.db, run.userId, found.match.id, found.match.user, this.deps.clock.now(), {
        createdByConnector: true,
      });
      // Not (or no longer) wanted under this name: take it away, then the next reconcile creates what is wanted.
      return this.deprovision(run, found.match.id, diffDashboardUsers(found.match.user, null));
    }
    await removeAccount(this.deps.db, run.userId);
    return desired ? this.create(run, desired, diffDashboardUsers(null, desired)) : { kind: "done" };
  }

  /** One PUT of the complete resource; a reduction is funded from the reserve (it never waits for budget). */
  private async update(
    run: Run,
    platformId: string,
    desired: DesiredDashboardUser,
    changes: Change[],
    reduction: boolean,
  ): Promise<ReconcileResult> {
    if (await this.heldForLegacy(desired)) {
      // Access taken away never waits: the reduction goes out in granular terms when they are known.
      const translated = reduction ? toGranular(desired, run.equivalents ?? {}) : undefined;
      if (!translated) return this.holdForLegacy(run, "update", changes);
      desired = translated;
    }
    const outcome = await this.deps.platform.replaceUser(
      platformId,
      desired,
      this.spend(run, "update", reduction ? "reduction" : "ordinary"),
    );
    this.note(run, outcome);
    if (outcome.kind === "ok") {
      const answered = this.deps.platform.readResource(outcome.body, identifierKeysOf(desired));
      if (answered) await this.learnFrom(answered, desired);
      await recordApplied(this.deps.db, run.userId, platformId, desired, this.deps.clock.now());
      await this.writeApplied(run, "update", changes, desired);
      return { kind: "done" };
    }
    if (outcome.kind === "http_error" && outcome.status === 404) {
      // Someone deleted the account on the platform: recreate it.
      await removeAccount(this.deps.db, run.userId);
      await this.write(run, "update", "failed", changes, { error: "account missing on the platform; recreating" });
      run.before = null;
      return this.create(run, desired, diffDashboardUsers(null, desired));
    }
    if (await this.legacy.noteIfRefused(outcome, desired)) {
      // A reduction is sent again at once, translated; a grant waits for the mapping.
      if (reduction && toGranular(desired, run.equivalents ?? {}))
        return this.update(run, platformId, desired, changes, reduction);
      return this.holdForLegacy(run, "update", changes, outcome);
    }
    return this.fail(run, "update", changes, resultOfFailure(outcome), outcome);
  }

  /** Whether a write of `desired` must not go out: it carries legacy strings the platform refuses. */
  private async heldForLegacy(desired: DesiredDashboardUser): Promise<boolean> {
    return legacyStringsIn(desired).length > 0 && (await this.legacy.refusesLegacy());
  }

  /**
   * Keeps a grant the platform refuses for its legacy strings on the queue (`held-legacy`), spending
   * nothing more; the mapping change that removes them marks the user again and it goes out.
   */
  private async holdForLegacy(
    run: Run,
    action: LogAction,
    changes: Change[],
    outcome?: HttpOutcome,
  ): Promise<ReconcileResult> {
    const refusedNow = outcome?.kind === "http_error" ? ` (${outcome.status}: ${errorDetail(outcome.body)})` : "";
    await this.write(run, action, "held", changes, {
      error: `held: the platform refuses legacy permission strings${refusedNow}; this grant goes out once the mapping is migrated (scim-connector mapping migrate FILE --write)`,
    });
    return {
      kind: "requeue",
      at: new Date(this.deps.clock.now().getTime() + HELD_LEGACY_RECHECK_MS),
      action: "held-legacy",
    };
  }

  /** What an answer teaches (identifiers, model); a granular write that succeeded ends a refusal incident. */
  private async learnFrom(answered: AnsweredAccount, sent: DesiredDashboardUser | null): Promise<void> {
    await this.legacy.learn(answered);
    if (sent && legacyStringsIn(sent).length === 0 && sent.permissionModel === "granular")
      await this.legacy.noteGranularApplied();
  }

  private async deprovisionGuarded(
    run: Run,
    platformId: string,
    changes: Change[],
    hold: Hold | undefined,
    reason: DeprovisionReason,
  ): Promise<ReconcileResult> {
    if (await this.breakerHolds(run, platformId, changes, hold)) return { kind: "done" };
    return this.deprovision(run, platformId, changes, DEPROVISION_WORDS[reason]);
  }

  /**
   * The mass-deprovision breaker in front of a DELETE (what cannot be undone): true when the
   * delete must not go out now (waiting for, or refused by, an admin, or held here).
   */
  private async breakerHolds(
    run: Run,
    platformId: string,
    changes: Change[],
    hold: Hold | undefined,
  ): Promise<boolean> {
    if (hold?.kind === "deprovision") return hold.decision !== "approved"; // waiting for, or refused by, an admin
    const { db, clock, breaker } = this.deps;
    const now = clock.now();
    // The wave is what waits in the queue plus what is already held: without the held ones, a
    // wave would be held only until the rest of it fit under the threshold, which then ran.
    const [accounts, doneLastHour, queued, held] = await Promise.all([
      countAccounts(db),
      countDeprovisionsSince(db, new Date(now.getTime() - 3_600_000)),
      countPendingDeprovisions(db, now, PRIORITY.deprovision),
      countUndecidedHolds(db, "deprovision"),
    ]);
    const pending = queued + held;
    if (!shouldHoldDeprovision(breaker, accounts, doneLastHour, Math.max(1, pending))) return false;
    await this.hold(
      run,
      { userId: run.userId, kind: "deprovision", userName: run.userName ?? "", detail: { platformId, changes }, now },
      {
        action: "hold",
        changes,
        error: `mass-deprovision breaker: ${doneLastHour} done in the last hour, ${pending} pending`,
      },
    );
    return true;
  }

  /**
   * Strip now, delete later: PUT the account with no permissions (a reduction, from the reserve)
   * and keep it; its queue row comes back when the grace ends. A wave of strips does not wait
   * (taking access away is never held), but it trips the breaker for the deletes that would
   * follow: each strip past the threshold holds its account's later DELETE for an admin.
   */
  private async strip(
    run: Run,
    plan: Extract<Plan, { action: "strip" }>,
    hold: Hold | undefined,
  ): Promise<ReconcileResult> {
    const { db, clock, platform } = this.deps;
    const outcome = await platform.replaceUser(plan.platformId, plan.stripped, this.spend(run, "strip", "reduction"));
    this.note(run, outcome);
    if (outcome.kind === "http_error" && outcome.status === 404) {
      await removeAccount(db, run.userId);
      await deleteHold(db, run.userId);
      await this.write(run, "deprovision", "succeeded", plan.changes, {
        after: null,
        error: "access removed: the account was already gone from the platform",
      });
      return { kind: "done" };
    }
    if (outcome.kind === "http_error" && refusedAsInvalid(outcome.status)) {
      await this.write(run, "update", "failed", plan.changes, {
        error: `the platform refused an account with no permissions (${outcome.status}: ${errorDetail(outcome.body)}); deleting it at once instead`,
      });
      log.warn("reconcile", "platform refused a stripped account; deleting it at once", { status: outcome.status });
      return this.deprovisionGuarded(run, plan.platformId, diffDashboardUsers(run.before, null), hold, "no-grace");
    }
    if (outcome.kind !== "ok") return this.fail(run, "update", plan.changes, resultOfFailure(outcome), outcome);
    const now = clock.now();
    await recordApplied(db, run.userId, plan.platformId, plan.stripped, now, {
      stripped: { deleteAfter: plan.deleteAfter },
    });
    const kept = plan.deleteAfter ? `account kept until ${plan.deleteAfter.toISOString()}` : "adopted account kept";
    await this.write(run, "update", "succeeded", plan.changes, {
      after: plan.stripped,
      reasons: [],
      error: `access removed: ${run.why ?? "no access left"}; ${kept}`,
    });
    log.info("reconcile", "access removed; account kept", {
      deleteAfter: plan.deleteAfter?.toISOString() ?? null,
    });
    if (plan.forget) {
      await removeAccount(db, run.userId);
      return { kind: "done" };
    }
    if (!plan.deleteAfter) return { kind: "done" };
    await this.holdWaveOfStrips(run, plan, now);
    return { kind: "requeue", at: plan.deleteAfter };
  }

  /** A mass strip: hold this account's later DELETE for an admin (the strip itself has gone out). */
  private async holdWaveOfStrips(run: Run, plan: Extract<Plan, { action: "strip" }>, now: Date): Promise<void> {
    const { db, breaker } = this.deps;
    const hourAgo = new Date(now.getTime() - 3_600_000);
    const [accounts, deleted, stripped, queued, held] = await Promise.all([
      countAccounts(db),
      countDeprovisionsSince(db, hourAgo),
      countStripsToDeleteSince(db, hourAgo),
      countPendingDeprovisions(db, now, PRIORITY.deprovision),
      countUndecidedHolds(db, "deprovision"),
    ]);
    if (!shouldHoldDeprovision(breaker, accounts, deleted + stripped - 1, 1 + queued + held)) return;
    const changes = diffDashboardUsers(plan.stripped, null);
    await this.hold(
      run,
      {
        userId: run.userId,
        kind: "deprovision",
        userName: run.userName ?? "",
        detail: { platformId: plan.platformId, changes },
        now,
      },
      {
        action: "hold",
        changes,
        error: `mass-deprovision breaker: ${stripped} accounts stripped and ${deleted} deleted in the last hour; access is removed, the delete after the grace waits for an admin`,
      },
    );
  }

  private async deprovision(run: Run, platformId: string, changes: Change[], words?: string): Promise<ReconcileResult> {
    const outcome = await this.deps.platform.deleteUser(platformId, this.spend(run, "deprovision", "reduction"));
    this.note(run, outcome);
    if (outcome.kind === "ok" || (outcome.kind === "http_error" && outcome.status === 404)) {
      await removeAccount(this.deps.db, run.userId);
      await deleteHold(this.deps.db, run.userId);
      await this.write(run, "deprovision", "succeeded", changes, { after: null, ...(words ? { error: words } : {}) });
      return { kind: "done" };
    }
    return this.fail(run, "deprovision", changes, resultOfFailure(outcome), outcome);
  }

  /** RECONCILE_ON_EMAIL_CHANGE=recreate: the DELETE (behind the breaker), then the create, in the same pass. */
  private async recreate(
    run: Run,
    plan: Extract<Plan, { action: "recreate" }>,
    hold: Hold | undefined,
  ): Promise<ReconcileResult> {
    const gone = diffDashboardUsers(run.before, null);
    if (await this.breakerHolds(run, plan.platformId, gone, hold)) return { kind: "done" };
    const removed = await this.deprovision(
      run,
      plan.platformId,
      gone,
      "userName changed: the old account is deleted and a new one created",
    );
    if (removed.kind !== "done") return removed;
    run.before = null;
    return this.create(run, plan.desired, diffDashboardUsers(null, plan.desired));
  }

  /** The platform cannot rename a userName: hold for an admin, or (once approved) delete and create. */
  private async emailChange(
    run: Run,
    plan: Extract<Plan, { action: "email-change" }>,
    hold: Hold | undefined,
  ): Promise<ReconcileResult> {
    if (hold?.kind === "email_change" && hold.decision === "approved") {
      const removed = await this.deprovision(run, plan.platformId, diffDashboardUsers(run.before, null));
      if (removed.kind !== "done") return removed;
      run.before = null;
      return this.create(run, plan.desired, diffDashboardUsers(null, plan.desired));
    }
    if (plan.interim) {
      // Only the rename waits: grants and reductions reach the account under its current userName.
      run.userName = plan.interim.desired.userName;
      const applied = await this.update(
        run,
        plan.platformId,
        plan.interim.desired,
        plan.interim.changes,
        plan.interim.reduction,
      );
      if (applied.kind !== "done") return applied;
      run.before = plan.interim.desired;
      run.userName = plan.desired.userName;
    }
    if (hold?.kind === "email_change") return { kind: "done" };
    const { clock } = this.deps;
    await this.hold(
      run,
      {
        userId: run.userId,
        kind: "email_change",
        userName: plan.desired.userName,
        detail: { from: run.before?.userName ?? null, to: plan.desired.userName, platformId: plan.platformId },
        now: clock.now(),
      },
      {
        action: "needs-admin",
        changes: plan.changes,
        error:
          "userName changed in the IdP; the platform cannot rename an account (approve to delete and re-create it)",
      },
    );
    return { kind: "done" };
  }

  /** `byId`: the identifiers the desired state names things by, so the answer compares with it. */
  private async lookup(
    run: Run,
    userName: string,
    byId?: ReadonlySet<string>,
  ): Promise<{ match: { id: string; user: DesiredDashboardUser } | undefined } | ReconcileResult> {
    const outcome = await this.deps.platform.findUserByUserName(userName, this.spend(run, "lookup", "ordinary"));
    this.note(run, outcome);
    if (outcome.kind !== "ok") return resultOfFailure(outcome);
    const match = this.deps.platform
      .readList(outcome.body, byId)
      .find((r) => r.user.userName.toLowerCase() === userName.toLowerCase());
    if (match) await this.learnFrom(match, null);
    return { match };
  }

  /**
   * Phase 2 of a full resync for one account: GET it by id with spare budget only, compare with
   * what was last applied, and log drift. With `drift: enforce` the observed state is recorded as
   * the last applied one, so the reconcile that follows puts the desired state back (a missing
   * account is recreated). Returns a result only when the verification could not be done now.
   */
  private async verify(
    userId: string,
    runId: string,
    reconcileId: string,
    trigger: DirtyTrigger,
  ): Promise<ReconcileResult | undefined> {
    const { db, clock } = this.deps;
    const account = await getAccount(db, userId);
    if (!account?.platformId || !account.lastApplied) {
      await clearVerification(db, userId);
      return undefined;
    }
    const run: Run = {
      userId,
      reconcileId,
      trigger,
      actor: null,
      runId,
      userName: account.userName,
      before: account.lastApplied,
      calls: 0,
      lastStatus: null,
      queuedAt: null,
    };
    let outcome: HttpOutcome;
    try {
      outcome = await this.deps.platform.getUser(account.platformId, this.spend(run, "verify", "verify"));
    } catch (error) {
      if (error instanceof BudgetExhausted) return { kind: "budget", resetsAt: error.resetsAt };
      throw error;
    }
    this.note(run, outcome);
    const enforce = this.deps.drift === "enforce";
    let observed: DesiredDashboardUser | null;
    if (outcome.kind === "ok") {
      const answered = this.deps.platform.readResource(outcome.body, identifierKeysOf(account.lastApplied));
      if (answered) await this.learnFrom(answered, null);
      observed = answered?.user ?? null;
    } else if (outcome.kind === "http_error" && outcome.status === 404) observed = null;
    else return this.fail(run, "verify", [], resultOfFailure(outcome), outcome);

    // The platform may answer in granular terms what was applied in legacy ones (its migration):
    // the same access is no drift.
    const equivalents = (await this.deps.source.equivalents?.()) ?? {};
    const changes = diffInSameTerms(account.lastApplied, observed, equivalents);
    if (changes.length) {
      await this.write(run, "drift", enforce ? "enforced" : "reported", changes, {
        after: observed,
        error: observed
          ? "the platform holds something other than what was last applied"
          : "the account is missing on the platform",
      });
      if (enforce) {
        // A stripped account stays stripped, its delete at the same time: verifying changes nothing
        // of what the IdP grants (the planner strips what drift put back).
        if (observed)
          await recordApplied(db, userId, account.platformId, observed, clock.now(), {
            verified: true,
            stripped: account.strippedAt ? { deleteAfter: account.deleteAfter ?? null } : undefined,
          });
        else await removeAccount(db, userId);
      }
    }
    if (!enforce || observed) await markVerified(db, userId, clock.now());
    await countVerified(db, runId, userId, { drifted: changes.length > 0 });
    return undefined;
  }

  /** Stores a hold and, in the same transaction, opens (or updates) the approval.required incident. */
  /**
   * Holds an action for an admin, with its log entry in the same transaction: an admin never sees
   * (and approves) a hold the log does not show yet, and a crash leaves both or neither.
   */
  private async hold(
    run: Run,
    hold: Parameters<typeof createHold>[1],
    entry: { action: "hold" | "needs-admin"; changes: Change[]; error: string },
  ): Promise<void> {
    await this.deps.db.transaction(async (tx) => {
      await createHold(tx, hold);
      await holdsChanged(tx, hold.now);
      // The log's chain head is this transaction's last lock (src/db/auditChain.ts).
      await this.write(run, entry.action, "held", entry.changes, { error: entry.error }, tx);
    });
  }

  /** The IdP made a held action moot: drop the hold; the last one resolves approval.required. */
  private async dropHold(userId: string): Promise<void> {
    await this.deps.db.transaction(async (tx) => {
      await deleteHold(tx, userId);
      await holdSettled(tx, this.deps.clock.now(), { decision: "withdrawn", by: "the IdP" });
    });
  }

  /** The budget debit that runs just before a request leaves; `then` runs after a successful debit. */
  private spend(run: Run, action: string, kind: SpendKind, then?: () => Promise<void>): BeforeSend {
    return async () => {
      const debit = await debitBudget(
        this.deps.db,
        this.deps.budget,
        this.deps.clock.now(),
        {
          action,
          kind,
          userId: run.userId,
          reconcileId: run.reconcileId,
          ...(run.runId ? { runId: run.runId } : {}),
        },
        kind === "verify"
          ? undefined
          : (tx, refused) => budgetRefused(tx, this.deps.clock.now(), this.deps.budget, { ...refused, kind }),
      );
      if (!debit.ok) throw new BudgetExhausted(debit.resetsAt);
      run.calls++;
      await then?.();
    };
  }

  private note(run: Run, outcome: HttpOutcome): void {
    run.lastStatus = "status" in outcome && typeof outcome.status === "number" ? outcome.status : run.lastStatus;
  }

  private async fail(
    run: Run,
    action: LogAction,
    changes: Change[],
    result: ReconcileResult,
    outcome?: HttpOutcome,
  ): Promise<ReconcileResult> {
    const error =
      "error" in result
        ? result.error
        : result.kind === "rate-limited"
          ? `rate limited until ${result.until.toISOString()}`
          : result.kind;
    const detail = outcome && outcome.kind === "http_error" ? errorDetail(outcome.body) : undefined;
    await this.write(
      run,
      action,
      result.kind === "rate-limited" || result.kind === "retry" ? "retrying" : "failed",
      changes,
      {
        error: detail && !error.includes(detail) ? `${error}: ${detail}` : error,
      },
    );
    log.warn("reconcile", "reconcile failed", { action, result: result.kind, status: run.lastStatus });
    return result;
  }

  /** The entry for a desired state now held by the platform, with the rules and groups that give each grant. */
  private writeApplied(run: Run, action: LogAction, changes: Change[], desired: DesiredDashboardUser): Promise<void> {
    return this.write(run, action, "succeeded", changes, { after: desired, reasons: run.reasons?.() ?? null });
  }

  /** Writes the run's log entry, on `db` or in the caller's transaction `tx`. */
  private async write(
    run: Run,
    action: LogAction,
    outcome: LogOutcome,
    changes: Change[],
    extra: { after?: DesiredDashboardUser | null; reasons?: ExplainedGrant[] | null; error?: string },
    tx: Queryable = this.deps.db,
  ): Promise<void> {
    await writeLogEntry(tx, {
      at: this.deps.clock.now(),
      reconcileId: run.reconcileId,
      userId: run.userId,
      userName: run.userName,
      action,
      outcome,
      trigger: run.trigger,
      changes,
      before: run.before,
      after: extra.after,
      reasons: extra.reasons,
      platformStatus: run.lastStatus,
      callsSpent: run.calls,
      error: extra.error,
      actor: run.actor,
      queuedAt: run.queuedAt,
    });
    this.deps.onLogged?.(action, outcome);
    run.calls = 0; // each entry reports the calls spent since the previous one
  }
}

/** A held grant is tried again after a day at most (a mapping change releases it at once). */
const HELD_LEGACY_RECHECK_MS = 24 * 3_600_000;

function runIdOf(trigger: DirtyTrigger): string | null {
  return trigger.kind === "resync" ? trigger.runId : null;
}

/** Plans that keep an existing hold (the others make it moot: the user is entitled again). */
const KEEPS_HOLD = new Set<Plan["action"]>(["deprovision", "email-change", "strip", "await-delete", "recreate"]);

/** The log's words for a DELETE, by why it happens. */
const DEPROVISION_WORDS: Record<DeprovisionReason, string | undefined> = {
  "idp-deleted": "deleted in the IdP: account deleted at once",
  "grace-ended": "account deleted after the grace",
  "no-grace": undefined,
};

/** A 4xx that says the request itself was refused (not auth, not a missing account, not a pause). */
function refusedAsInvalid(status: number): boolean {
  return status >= 400 && status < 500 && ![401, 403, 404, 408, 409, 429].includes(status);
}

function actionOf(plan: Plan): LogAction {
  switch (plan.action) {
    case "create":
    case "resolve-create":
      return "create";
    case "deprovision":
    case "recreate":
      return "deprovision";
    case "email-change":
      return "needs-admin";
    default:
      return "update";
  }
}

function changesOf(plan: Plan): Change[] {
  return "changes" in plan ? plan.changes : [];
}
