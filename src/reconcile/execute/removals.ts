/**
 * The executors that take access away, and those that need an admin: a deprovision behind the
 * mass-deprovision breaker (its counts are read in breaker.ts), strip now and delete after the
 * grace, recreate on a userName change, and the email-change hold. One object per reconciler, on its
 * shared tools (pass.ts) and its writes (writes.ts): a strip the platform refuses deletes, a
 * recreate deletes then creates, in the same pass.
 */
import type { WriteExecutors } from "./writes.js";
import type { PassTools, ReconcilePass, ReconcilerDeps } from "../pass.js";
import { deleteHold, type Hold } from "../../db/reconcile/holdRepository.js";
import { recordApplied, removeAccount } from "../../db/platform/accountRepository.js";
import { recordUnmanagedDeleted, recordUnmanagedStripped } from "../../db/platform/unmanagedRemovalRepository.js";
import { log } from "../../logging/logger.js";
import { deleteWave, shouldHoldDeprovision, stripWave } from "../breaker.js";
import { diffDashboardUsers, type Change } from "../diff.js";
import { errorDetail, resultOfFailure, type ReconcileResult } from "../outcomes.js";
import type { DeprovisionReason, Plan } from "../planner.js";
import type { DesiredDashboardUser } from "../../mapping/types.js";

export class RemovalExecutors {
  private readonly deps: ReconcilerDeps;

  constructor(
    private readonly tools: PassTools,
    private readonly writes: WriteExecutors,
  ) {
    this.deps = tools.deps;
  }

  async deprovisionGuarded(
    pass: ReconcilePass,
    platformId: string,
    changes: Change[],
    hold: Hold | undefined,
    reason: DeprovisionReason,
  ): Promise<ReconcileResult> {
    if (await this.breakerHolds(pass, platformId, changes, hold)) return { kind: "done" };
    return this.writes.deprovision(pass, platformId, changes, DEPROVISION_WORDS[reason]);
  }

  /**
   * The mass-deprovision breaker in front of a DELETE (what cannot be undone): true when the
   * delete must not go out now (waiting for, or refused by, an admin, or held here).
   */
  private async breakerHolds(
    pass: ReconcilePass,
    platformId: string,
    changes: Change[],
    hold: Hold | undefined,
  ): Promise<boolean> {
    if (hold?.kind === "deprovision") return hold.decision !== "approved"; // waiting for, or refused by, an admin
    const { db, clock, breaker } = this.deps;
    const now = clock.now();
    if (pass.unmanaged) {
      // A reviewer's delete of an account made by hand always waits for an admin (the usual approval).
      await this.tools.hold(
        pass,
        {
          userId: pass.userId,
          kind: "deprovision",
          userName: pass.userName ?? "",
          detail: { platformId, changes, why: pass.why },
          now,
        },
        { action: "hold", changes, note: `${pass.why}; the DELETE waits for an admin's approval` },
      );
      return true;
    }
    const { accounts, doneLastHour, pending } = await deleteWave(db, now);
    if (!shouldHoldDeprovision(breaker, accounts, doneLastHour, Math.max(1, pending))) return false;
    await this.tools.hold(
      pass,
      { userId: pass.userId, kind: "deprovision", userName: pass.userName ?? "", detail: { platformId, changes }, now },
      {
        action: "hold",
        changes,
        note: `mass-deprovision breaker: ${doneLastHour} done in the last hour, ${pending} pending`,
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
  async strip(
    pass: ReconcilePass,
    plan: Extract<Plan, { action: "strip" }>,
    hold: Hold | undefined,
  ): Promise<ReconcileResult> {
    const { db, clock, platform } = this.deps;
    const outcome = await platform.replaceUser(
      plan.platformId,
      plan.stripped,
      this.tools.spend(pass, "strip", "reduction"),
    );
    this.tools.note(pass, outcome);
    if (outcome.kind === "http_error" && outcome.status === 404) {
      await removeAccount(db, pass.userId);
      await deleteHold(db, pass.userId);
      if (pass.unmanaged) await recordUnmanagedDeleted(db, pass.userId, clock.now());
      await this.tools.write(pass, "deprovision", "succeeded", plan.changes, {
        after: null,
        note: "access removed: the account was already gone from the platform",
      });
      return { kind: "done" };
    }
    // A reviewer who chose to strip an account made by hand did not choose its delete.
    if (outcome.kind === "http_error" && refusedAsInvalid(outcome.status) && !pass.unmanaged) {
      await this.tools.write(pass, "update", "failed", plan.changes, {
        error: `the platform refused an account with no permissions (${outcome.status}: ${errorDetail(outcome.body)}); deleting it at once instead`,
      });
      log.warn("reconcile", "platform refused a stripped account; deleting it at once", { status: outcome.status });
      return this.deprovisionGuarded(pass, plan.platformId, diffDashboardUsers(pass.before, null), hold, "no-grace");
    }
    if (outcome.kind !== "ok") return this.tools.fail(pass, "update", plan.changes, resultOfFailure(outcome), outcome);
    const now = clock.now();
    if (pass.unmanaged) await recordUnmanagedStripped(db, pass.userId, permissionsOf(plan.stripped), now);
    else
      await recordApplied(db, pass.userId, plan.platformId, plan.stripped, now, {
        stripped: { deleteAfter: plan.deleteAfter },
      });
    const kept = plan.deleteAfter
      ? `account kept until ${plan.deleteAfter.toISOString()}`
      : pass.unmanaged
        ? "account kept, stripped"
        : "adopted account kept";
    await this.tools.write(pass, "update", "succeeded", plan.changes, {
      after: plan.stripped,
      reasons: [],
      note: `access removed: ${pass.why ?? "no access left"}; ${kept}`,
    });
    log.info("reconcile", "access removed; account kept", {
      deleteAfter: plan.deleteAfter?.toISOString() ?? null,
    });
    if (plan.forget) {
      await removeAccount(db, pass.userId);
      return { kind: "done" };
    }
    if (!plan.deleteAfter) return { kind: "done" };
    await this.holdWaveOfStrips(pass, plan, now);
    return { kind: "requeue", at: plan.deleteAfter };
  }

  /** A mass strip: hold this account's later DELETE for an admin (the strip itself has gone out). */
  private async holdWaveOfStrips(
    pass: ReconcilePass,
    plan: Extract<Plan, { action: "strip" }>,
    now: Date,
  ): Promise<void> {
    const { db, breaker } = this.deps;
    const { accounts, deleted, stripped, queued, held } = await stripWave(db, now);
    if (!shouldHoldDeprovision(breaker, accounts, deleted + stripped - 1, 1 + queued + held)) return;
    const changes = diffDashboardUsers(plan.stripped, null);
    await this.tools.hold(
      pass,
      {
        userId: pass.userId,
        kind: "deprovision",
        userName: pass.userName ?? "",
        detail: { platformId: plan.platformId, changes },
        now,
      },
      {
        action: "hold",
        changes,
        note: `mass-deprovision breaker: ${stripped} accounts stripped and ${deleted} deleted in the last hour; access is removed, the delete after the grace waits for an admin`,
      },
    );
  }

  /** RECONCILE_ON_EMAIL_CHANGE=recreate: the DELETE (behind the breaker), then the create, in the same pass. */
  async recreate(
    pass: ReconcilePass,
    plan: Extract<Plan, { action: "recreate" }>,
    hold: Hold | undefined,
  ): Promise<ReconcileResult> {
    const gone = diffDashboardUsers(pass.before, null);
    if (await this.breakerHolds(pass, plan.platformId, gone, hold)) return { kind: "done" };
    const removed = await this.writes.deprovision(
      pass,
      plan.platformId,
      gone,
      "userName changed: the old account is deleted and a new one created",
    );
    if (removed.kind !== "done") return removed;
    pass.before = null;
    return this.writes.create(pass, plan.desired, diffDashboardUsers(null, plan.desired));
  }

  /** The platform cannot rename a userName: hold for an admin, or (once approved) delete and create. */
  async emailChange(
    pass: ReconcilePass,
    plan: Extract<Plan, { action: "email-change" }>,
    hold: Hold | undefined,
  ): Promise<ReconcileResult> {
    if (hold?.kind === "email_change" && hold.decision === "approved") {
      const removed = await this.writes.deprovision(pass, plan.platformId, diffDashboardUsers(pass.before, null));
      if (removed.kind !== "done") return removed;
      pass.before = null;
      return this.writes.create(pass, plan.desired, diffDashboardUsers(null, plan.desired));
    }
    if (plan.interim) {
      // Only the rename waits: grants and reductions reach the account under its current userName.
      pass.userName = plan.interim.desired.userName;
      const applied = await this.writes.update(
        pass,
        plan.platformId,
        plan.interim.desired,
        plan.interim.changes,
        plan.interim.reduction,
      );
      if (applied.kind !== "done") return applied;
      pass.before = plan.interim.desired;
      pass.userName = plan.desired.userName;
    }
    if (hold?.kind === "email_change") return { kind: "done" };
    const { clock } = this.deps;
    await this.tools.hold(
      pass,
      {
        userId: pass.userId,
        kind: "email_change",
        userName: plan.desired.userName,
        detail: { from: pass.before?.userName ?? null, to: plan.desired.userName, platformId: plan.platformId },
        now: clock.now(),
      },
      {
        action: "needs-admin",
        changes: plan.changes,
        note: "userName changed in the IdP; the platform cannot rename an account (approve to delete and re-create it)",
      },
    );
    return { kind: "done" };
  }
}

/** The log's words for a DELETE, by why it happens. */
const DEPROVISION_WORDS: Record<DeprovisionReason, string | undefined> = {
  "idp-deleted": "deleted in the IdP: account deleted at once",
  "grace-ended": "account deleted after the grace",
  "no-grace": undefined,
};

const permissionsOf = (u: DesiredDashboardUser) => ({
  companyPermissions: u.companyPermissions,
  workspaces: u.workspaces,
});

/** A 4xx that says the request itself was refused (not auth, not a missing account, not a pause). */
function refusedAsInvalid(status: number): boolean {
  return status >= 400 && status < 500 && ![401, 403, 404, 408, 409, 429].includes(status);
}
