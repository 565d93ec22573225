/**
 * The executors that put an account in the desired state: create (and adopt on 409), the lost
 * create's resolution, the one PUT of an update, and the plain DELETE. Each debits the budget
 * just before its request and writes the log entry of what happened. One object per reconciler, on
 * its shared tools (pass.ts); the removals (removals.ts) call its create, update and delete.
 */
import type { PassTools, ReconcilePass, ReconcilerDeps } from "../pass.js";
import { deleteHold } from "../../db/reconcile/holdRepository.js";
import {
  markCreating,
  recordApplied,
  removeAccount,
  type PlatformAccount,
} from "../../db/platform/accountRepository.js";
import { recordUnmanagedDeleted } from "../../db/platform/unmanagedRemovalRepository.js";
import type { LogAction } from "../../vocabulary/reconcile.js";
import type { DesiredDashboardUser } from "../../mapping/types.js";
import { diffDashboardUsers, diffInSameTerms, type Change } from "../diff.js";
import { toGranular } from "../../mapping/granular.js";
import { identifierKeysOf } from "../../platform/scim.js";
import { provablyNotApplied, resultOfFailure, type ReconcileResult } from "../outcomes.js";

export class WriteExecutors {
  private readonly deps: ReconcilerDeps;

  constructor(private readonly tools: PassTools) {
    this.deps = tools.deps;
  }

  async create(pass: ReconcilePass, desired: DesiredDashboardUser, changes: Change[]): Promise<ReconcileResult> {
    const { db, clock } = this.deps;
    if (await this.tools.heldForLegacy(desired)) return this.tools.holdForLegacy(pass, "create", changes);
    // The account is marked 'creating' only once the request is affordable and about to leave.
    const beforeSend = this.tools.spend(pass, "create", "ordinary", () =>
      markCreating(db, pass.userId, desired.userName, clock.now()),
    );
    const outcome = await this.deps.platform.createUser(desired, beforeSend);
    this.tools.note(pass, outcome);
    if (outcome.kind === "ok") {
      const created = this.deps.platform.readResource(outcome.body, identifierKeysOf(desired));
      if (!created)
        return this.tools.fail(pass, "create", changes, { kind: "retry", error: "create answered without an id" });
      await this.tools.learnFrom(created, desired);
      await recordApplied(db, pass.userId, created.id, desired, clock.now(), { createdByConnector: true });
      await this.tools.writeApplied(pass, "create", changes, desired);
      return { kind: "done" };
    }
    if (outcome.kind === "http_error" && outcome.status === 409) {
      await removeAccount(db, pass.userId);
      return this.adopt(pass, desired, false);
    }
    if (provablyNotApplied(outcome)) await removeAccount(db, pass.userId);
    if (await this.tools.legacy.noteIfRefused(outcome, desired))
      return this.tools.holdForLegacy(pass, "create", changes, outcome);
    return this.tools.fail(pass, "create", changes, resultOfFailure(outcome), outcome);
  }

  /** An account with this userName exists on the platform: take its id, and PUT only if it differs. */
  private async adopt(
    pass: ReconcilePass,
    desired: DesiredDashboardUser,
    createdByConnector: boolean,
  ): Promise<ReconcileResult> {
    const found = await this.tools.lookup(pass, desired.userName, identifierKeysOf(desired));
    if ("kind" in found) return this.tools.fail(pass, "adopt", [], found);
    if (!found.match)
      return this.tools.fail(pass, "adopt", [], {
        kind: "retry",
        error: "platform reported a conflict but the lookup found no account",
      });
    return this.applyToFound(pass, found.match, desired, createdByConnector, "adopt");
  }

  private async applyToFound(
    pass: ReconcilePass,
    found: { id: string; user: DesiredDashboardUser },
    desired: DesiredDashboardUser,
    createdByConnector: boolean,
    action: LogAction,
  ): Promise<ReconcileResult> {
    const { db, clock } = this.deps;
    const changes = diffInSameTerms(found.user, desired, pass.equivalents ?? {});
    pass.before = found.user;
    if (changes.length) {
      const outcome = await this.deps.platform.replaceUser(
        found.id,
        desired,
        this.tools.spend(pass, "update", "ordinary"),
      );
      this.tools.note(pass, outcome);
      if (outcome.kind !== "ok") return this.tools.fail(pass, action, changes, resultOfFailure(outcome), outcome);
    }
    await recordApplied(db, pass.userId, found.id, desired, clock.now(), { createdByConnector, verified: true });
    await this.tools.writeApplied(pass, action, changes, desired);
    return { kind: "done" };
  }

  /** A create's answer was lost: find out by lookup whether it happened, never by a second POST. */
  async resolveCreate(
    pass: ReconcilePass,
    account: PlatformAccount,
    desired: DesiredDashboardUser | null,
  ): Promise<ReconcileResult> {
    const found = await this.tools.lookup(pass, account.userName, identifierKeysOf(desired));
    if ("kind" in found) return this.tools.fail(pass, desired ? "create" : "deprovision", [], found);
    if (found.match) {
      if (desired && desired.userName.toLowerCase() === account.userName.toLowerCase())
        return this.applyToFound(pass, found.match, desired, true, "create");
      await recordApplied(this.deps.db, pass.userId, found.match.id, found.match.user, this.deps.clock.now(), {
        createdByConnector: true,
      });
      // Not (or no longer) wanted under this name: take it away, then the next reconcile creates what is wanted.
      return this.deprovision(pass, found.match.id, diffDashboardUsers(found.match.user, null));
    }
    await removeAccount(this.deps.db, pass.userId);
    return desired ? this.create(pass, desired, diffDashboardUsers(null, desired)) : { kind: "done" };
  }

  /** One PUT of the complete resource; a reduction is funded from the reserve (it never waits for budget). */
  async update(
    pass: ReconcilePass,
    platformId: string,
    desired: DesiredDashboardUser,
    changes: Change[],
    reduction: boolean,
  ): Promise<ReconcileResult> {
    if (await this.tools.heldForLegacy(desired)) {
      // Access taken away never waits: the reduction goes out in granular terms when they are known.
      const translated = reduction ? toGranular(desired, pass.equivalents ?? {}) : undefined;
      if (!translated) return this.tools.holdForLegacy(pass, "update", changes);
      desired = translated;
    }
    const outcome = await this.deps.platform.replaceUser(
      platformId,
      desired,
      this.tools.spend(pass, "update", reduction ? "reduction" : "ordinary"),
    );
    this.tools.note(pass, outcome);
    if (outcome.kind === "ok") {
      const answered = this.deps.platform.readResource(outcome.body, identifierKeysOf(desired));
      if (answered) await this.tools.learnFrom(answered, desired);
      await recordApplied(this.deps.db, pass.userId, platformId, desired, this.deps.clock.now());
      await this.tools.writeApplied(pass, "update", changes, desired);
      return { kind: "done" };
    }
    if (outcome.kind === "http_error" && outcome.status === 404) {
      // Someone deleted the account on the platform: recreate it.
      await removeAccount(this.deps.db, pass.userId);
      await this.tools.write(pass, "update", "failed", changes, {
        error: "account missing on the platform; recreating",
      });
      pass.before = null;
      return this.create(pass, desired, diffDashboardUsers(null, desired));
    }
    if (await this.tools.legacy.noteIfRefused(outcome, desired)) {
      // A reduction is sent again at once, translated; a grant waits for the mapping.
      if (reduction && toGranular(desired, pass.equivalents ?? {}))
        return this.update(pass, platformId, desired, changes, reduction);
      return this.tools.holdForLegacy(pass, "update", changes, outcome);
    }
    return this.tools.fail(pass, "update", changes, resultOfFailure(outcome), outcome);
  }

  async deprovision(
    pass: ReconcilePass,
    platformId: string,
    changes: Change[],
    words?: string,
  ): Promise<ReconcileResult> {
    const outcome = await this.deps.platform.deleteUser(platformId, this.tools.spend(pass, "deprovision", "reduction"));
    this.tools.note(pass, outcome);
    if (outcome.kind === "ok" || (outcome.kind === "http_error" && outcome.status === 404)) {
      await removeAccount(this.deps.db, pass.userId);
      await deleteHold(this.deps.db, pass.userId);
      if (pass.unmanaged) await recordUnmanagedDeleted(this.deps.db, pass.userId, this.deps.clock.now());
      const note = words ?? (pass.unmanaged ? `${pass.why}; account deleted` : undefined);
      await this.tools.write(pass, "deprovision", "succeeded", changes, { after: null, ...(note ? { note } : {}) });
      return { kind: "done" };
    }
    return this.tools.fail(pass, "deprovision", changes, resultOfFailure(outcome), outcome);
  }
}
