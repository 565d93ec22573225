import { randomUUID } from "node:crypto";
import { getHold, type Hold } from "../db/reconcile/holdRepository.js";
import { clearVerification } from "../db/reconcile/resyncRepository.js";
import { getAccount, recordApplied, removeAccount, type PlatformAccount } from "../db/platform/accountRepository.js";
import type { DirtyTrigger, LogAction } from "../vocabulary/reconcile.js";
import { withLogContext } from "../logging/logger.js";
import type { ExplainedGrant } from "../mapping/reasons.js";
import type { DesiredDashboardUser } from "../mapping/types.js";
import type { Change } from "./diff.js";
import type { Equivalents } from "../mapping/granular.js";
import type { ReconcileResult } from "./outcomes.js";
import { planReconcile, type Plan } from "./planner.js";
import { WriteExecutors } from "./execute/writes.js";
import { RemovalExecutors } from "./execute/removals.js";
import { PassTools, type ReconcilerDeps, type ReconcilePass } from "./pass.js";
import { verifyAccount } from "./verify.js";
import { checkAccount } from "./platformCheck.js";
import { getOutsideChange } from "../db/platform/outsideChangeRepository.js";
import { withOutsideAccess } from "./outsideAccess.js";
import { BudgetExhausted } from "./ports.js";
import { pendingUnmanagedRemoval } from "../db/platform/unmanagedRemovalRepository.js";
import type { UnmanagedAccount } from "../db/platform/unmanagedAccountRepository.js";
import { planUnmanagedRemoval, unmanagedAccountState, unmanagedRemovalWords } from "./unmanagedRemoval.js";

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
  /** An account made by hand that a campaign revoked (no IdP user, no account of the connector's): src/reconcile/unmanagedRemoval.ts. */
  unmanaged?: UnmanagedAccount;
};

/**
 * The reconciler's plan for a user, spending nothing and calling nothing: what `reconcile` acts
 * on, the worker's classification and `scim-connector plan` (which has no platform to call).
 */
export async function planUser(
  deps: Pick<ReconcilerDeps, "db" | "source" | "policies" | "clock" | "outsideChanges">,
  userId: string,
): Promise<UserPlan> {
  const [state, account, hold, outside] = await Promise.all([
    deps.source.load(userId),
    getAccount(deps.db, userId),
    getHold(deps.db, userId),
    deps.outsideChanges === "report" ? getOutsideChange(deps.db, userId) : undefined,
  ]);
  // An id no IdP user and no account has may be an account made by hand that a reviewer revoked.
  const unmanaged = !state.exists && !account ? await pendingUnmanagedRemoval(deps.db, userId) : undefined;
  if (unmanaged)
    return {
      plan: planUnmanagedRemoval(unmanaged, deps.clock.now()),
      equivalents: {},
      account: undefined,
      desired: null,
      reasons: undefined,
      userName: null,
      active: undefined,
      hold,
      unmanaged,
    };
  // PLATFORM_OUTSIDE_CHANGES=report: what was changed in the dashboard is kept, never undone.
  const wanted = state.desired && outside?.access ? withOutsideAccess(state.desired, outside.access) : state.desired;
  return {
    plan: planReconcile(wanted, account, deps.policies, {
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

/**
 * Reconcile(user): read the IdP state and the last applied state, compute the desired dashboard
 * user, and do the least on the platform. Each platform request is debited from the shared
 * budget just before it is sent (`spend`). Never branches on what woke it. It holds the pass's
 * shared tools (pass.ts), built once, and the executors of each family of plans on them.
 */
export class Reconciler {
  private readonly tools: PassTools;
  private readonly writes: WriteExecutors;
  private readonly removals: RemovalExecutors;

  constructor(readonly deps: ReconcilerDeps) {
    this.tools = new PassTools(deps);
    this.writes = new WriteExecutors(this.tools);
    this.removals = new RemovalExecutors(this.tools, this.writes);
  }

  /** The plan for a user as things stand, spending nothing (classification, previews). */
  plan(userId: string): Promise<UserPlan> {
    return planUser(this.deps, userId);
  }

  /**
   * Reads the user and its account, then writes the difference. With `platformCheck` (the queue
   * row asks for it: src/reconcile/platformCheck.ts) the account is read on the platform first.
   */
  reconcile(
    userId: string,
    trigger: DirtyTrigger,
    actor: string | null = null,
    options: ReconcileOptions = {},
  ): Promise<ReconcileResult> {
    return this.reconcileOne(userId, trigger, actor, options, null);
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
    options: ReconcileOptions = {},
  ): Promise<ReconcileResult> {
    return this.reconcileOne(userId, trigger, actor, options, verifyRun);
  }

  private async reconcileOne(
    userId: string,
    trigger: DirtyTrigger,
    actor: string | null,
    options: ReconcileOptions,
    verifyRun: string | null,
  ): Promise<ReconcileResult> {
    const reconcileId = randomUUID();
    const queuedAt = options.queuedAt ?? null;
    return withLogContext({ reconcileId }, async () => {
      const resyncRunId = verifyRun ?? resyncRunOf(trigger);
      const unverified = options.platformCheck
        ? await checkAccount(this.tools, userId, reconcileId, trigger, verifyRun)
        : verifyRun
          ? await verifyAccount(this.tools, userId, verifyRun, reconcileId, trigger)
          : undefined;
      const { plan, account, hold, reasons, active, equivalents, unmanaged } = await this.plan(userId);
      const held = unmanaged ? unmanagedAccountState(unmanaged) : account;
      if (unverified) {
        // No spare budget to verify: a pending change goes ahead (its PUT or DELETE sets the whole
        // account anyway); an account with nothing to change waits for spare budget. A check the
        // platform's record asked for always waits: what it reads decides what is written.
        if (unverified.kind !== "budget" || plan.action === "none" || options.platformCheck) return unverified;
        await clearVerification(this.deps.db, userId);
      }
      const pass: ReconcilePass = {
        userId,
        reconcileId,
        trigger,
        actor,
        resyncRunId,
        userName: held?.userName ?? null,
        before: held?.lastApplied ?? null,
        ...(reasons ? { reasons } : {}),
        why: unmanaged
          ? unmanagedRemovalWords(unmanaged)
          : active === undefined
            ? "deleted in the IdP"
            : active
              ? "no mapped group left"
              : "deactivated in the IdP",
        ...(unmanaged ? { unmanaged: true } : {}),
        calls: 0,
        lastStatus: null,
        queuedAt,
        equivalents,
      };
      if ("desired" in plan && plan.desired) pass.userName = plan.desired.userName;
      try {
        return await this.execute(pass, plan, account, hold);
      } catch (error) {
        if (error instanceof BudgetExhausted) {
          await this.tools.write(pass, actionOf(plan), "deferred-for-budget", changesOf(plan), { note: error.message });
          return { kind: "budget", resetsAt: error.resetsAt };
        }
        throw error;
      }
    });
  }

  private async execute(
    pass: ReconcilePass,
    plan: Plan,
    account: PlatformAccount | undefined,
    hold: Hold | undefined,
  ): Promise<ReconcileResult> {
    if (hold && !KEEPS_HOLD.has(plan.action)) await this.tools.dropHold(pass.userId);
    switch (plan.action) {
      case "none":
        return { kind: "done" };
      case "forget":
        await removeAccount(this.deps.db, pass.userId);
        return { kind: "done" };
      case "rebase":
        await recordApplied(this.deps.db, pass.userId, plan.platformId, plan.desired, this.deps.clock.now());
        await this.tools.write(pass, "update", "succeeded", [], {
          after: plan.desired,
          reasons: pass.reasons?.() ?? null,
          note: "re-based to granular permissions, nothing sent: the account holds in legacy terms exactly what the mapping grants",
        });
        return { kind: "done" };
      case "create":
        return this.writes.create(pass, plan.desired, plan.changes);
      case "resolve-create":
        return this.writes.resolveCreate(pass, account!, plan.desired);
      case "update":
        return this.writes.update(pass, plan.platformId, plan.desired, plan.changes, plan.reduction);
      case "strip":
        return this.removals.strip(pass, plan, hold);
      case "await-delete":
        // Never early: the row comes back when the grace ends (a restart keeps it: it is the queue row).
        return { kind: "requeue", at: plan.deleteAfter };
      case "deprovision":
        return this.removals.deprovisionGuarded(pass, plan.platformId, plan.changes, hold, plan.reason);
      case "recreate":
        return this.removals.recreate(pass, plan, hold);
      case "email-change":
        return this.removals.emailChange(pass, plan, hold);
    }
  }
}

export type ReconcileOptions = {
  queuedAt?: Date | null;
  /** Read the account on the platform first: the platform's record says someone else changed it. */
  platformCheck?: boolean;
};

function resyncRunOf(trigger: DirtyTrigger): string | null {
  return trigger.kind === "resync" ? trigger.runId : null;
}

/** Plans that keep an existing hold (the others make it moot: the user is entitled again). */
const KEEPS_HOLD = new Set<Plan["action"]>(["deprovision", "email-change", "strip", "await-delete", "recreate"]);

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
