/**
 * The executors that put an account in the desired state: create (and adopt on 409), the lost
 * create's resolution, the one PUT of an update, and the plain DELETE. Each debits the budget
 * just before its request and writes the log entry of what happened.
 */
import { PassTools, type Run } from "./pass.js";
import { deleteHold } from "../db/holdRepository.js";
import { markCreating, recordApplied, removeAccount, type PlatformAccount } from "../db/platformAccountRepository.js";
import type { LogAction } from "./vocabulary.js";
import type { DesiredDashboardUser } from "../mapping/types.js";
import { diffDashboardUsers, diffInSameTerms, type Change } from "./diff.js";
import { toGranular } from "../mapping/granular.js";
import { identifierKeysOf } from "../platform/scim.js";
import { provablyNotApplied, resultOfFailure, type ReconcileResult } from "./outcomes.js";

export class WriteExecutors extends PassTools {
  protected async create(run: Run, desired: DesiredDashboardUser, changes: Change[]): Promise<ReconcileResult> {
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
  protected async adopt(
    run: Run,
    desired: DesiredDashboardUser,
    createdByConnector: boolean,
  ): Promise<ReconcileResult> {
    const found = await this.lookup(run, desired.userName, identifierKeysOf(desired));
    if ("kind" in found) return this.fail(run, "adopt", [], found);
    if (!found.match)
      return this.fail(run, "adopt", [], {
        kind: "retry",
        error: "platform reported a conflict but the lookup found no account",
      });
    return this.applyToFound(run, found.match, desired, createdByConnector, "adopt");
  }

  protected async applyToFound(
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
  protected async resolveCreate(
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
  protected async update(
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

  protected async deprovision(
    run: Run,
    platformId: string,
    changes: Change[],
    words?: string,
  ): Promise<ReconcileResult> {
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
}
