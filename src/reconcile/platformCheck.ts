/**
 * The check the platform's record asks for (src/platformRecord/managedChanges.ts): someone other
 * than the connector changed a managed account on the platform, so the reconciler reads it once (a
 * GET by id) before its plan. PLATFORM_OUTSIDE_CHANGES=revert records what it read as the last
 * applied state, so the plan that follows puts back what the mapping grants with one PUT, whatever
 * RESYNC_DRIFT says; `report` keeps what it read (src/db/platform/outsideChangeRepository.ts) and the
 * planner leaves it in place (planUser applies it to the desired state).
 */
import type { PassTools, ReconcilePass } from "./pass.js";
import { countVerified } from "../db/reconcile/resyncRepository.js";
import { clearPlatformCheck } from "../db/reconcile/queueRepository.js";
import {
  getAccount,
  markVerified,
  recordApplied,
  removeAccount,
  type PlatformAccount,
} from "../db/platform/accountRepository.js";
import { clearOutsideChange, saveOutsideChange } from "../db/platform/outsideChangeRepository.js";
import { platformChangeWords, type DirtyTrigger } from "../vocabulary/reconcile.js";
import type { DesiredDashboardUser } from "../mapping/types.js";
import { inSameTerms } from "../mapping/granular.js";
import { diffInSameTerms, type Change } from "./diff.js";
import { accessWords, isEmptyAccess, outsideAccess, undoWords, type OutsideAccess } from "./outsideAccess.js";
import type { ReconcileResult } from "./outcomes.js";
import { observeAccount, readingPass } from "./verify.js";

/**
 * Reads the account and reverts or keeps what was changed on it. Returns a result only when the
 * account could not be read now (the row waits for budget, or retries).
 */
export async function checkAccount(
  tools: PassTools,
  userId: string,
  reconcileId: string,
  trigger: DirtyTrigger,
  verifyRun: string | null,
): Promise<ReconcileResult | undefined> {
  const { db, clock } = tools.deps;
  const account = await getAccount(db, userId);
  if (!account?.platformId || !account.lastApplied) {
    // Nothing on the platform to read (not created yet, or forgotten): the plan does what is due.
    await clearPlatformCheck(db, userId);
    return undefined;
  }
  const pass = readingPass(account.userName, account.lastApplied, {
    userId,
    reconcileId,
    trigger,
    resyncRunId: verifyRun,
  });
  const policy = tools.deps.outsideChanges ?? "revert";
  // An outside grant is access to take away: its read is funded as the reduction it leads to.
  const read = await observeAccount(
    tools,
    pass,
    account.platformId,
    account.lastApplied,
    policy === "revert" ? "reduction" : "ordinary",
  );
  if ("kind" in read) return read;
  const equivalents = (await tools.deps.source.equivalents?.()) ?? {};
  const changes = diffInSameTerms(account.lastApplied, read.observed, equivalents);
  const said = trigger.kind === "platform" ? platformChangeWords(trigger) : "changed on the platform";
  if (policy === "revert") await revert(tools, pass, account, read.observed, changes, said);
  else await keep(tools, pass, account, read.observed, changes, said, trigger);
  await clearPlatformCheck(db, userId);
  if (read.observed) await markVerified(db, userId, clock.now());
  if (verifyRun) await countVerified(db, verifyRun, userId, { drifted: changes.length > 0 });
  return undefined;
}

/** Records what was read as last applied: the plan that follows puts the mapping's grants back. */
async function revert(
  tools: PassTools,
  pass: ReconcilePass,
  account: PlatformAccount,
  observed: DesiredDashboardUser | null,
  changes: Change[],
  said: string,
): Promise<void> {
  await clearOutsideChange(tools.deps.db, pass.userId);
  if (!changes.length) {
    await tools.write(pass, "verify", "succeeded", [], {
      after: observed,
      note: `${said}; the account holds what was last applied: nothing to undo`,
    });
    return;
  }
  await tools.write(pass, "drift", "enforced", changes, {
    after: observed,
    note: observed ? `${said}; ${undoWords(changes)}` : `${said}; the account is missing: created again`,
  });
  await recordObserved(tools, account, observed);
}

/** PLATFORM_OUTSIDE_CHANGES=report: what was read is kept, stored and shown; nothing is written. */
async function keep(
  tools: PassTools,
  pass: ReconcilePass,
  account: PlatformAccount,
  observed: DesiredDashboardUser | null,
  changes: Change[],
  said: string,
  trigger: DirtyTrigger,
): Promise<void> {
  const { db, clock } = tools.deps;
  const platform = trigger.kind === "platform" ? trigger : undefined;
  const facts = {
    userId: pass.userId,
    userName: account.userName,
    event: platform ? (platform.name ?? platform.event) : "changed on the platform",
    actor: platform?.actor ?? "unknown",
    at: platform && !Number.isNaN(Date.parse(platform.at)) ? new Date(platform.at) : clock.now(),
    recordedAt: clock.now(),
  };
  if (!observed) {
    await saveOutsideChange(db, { ...facts, change: "removed", access: null });
    await tools.write(pass, "drift", "reported", changes, {
      after: null,
      note: `${said}; the account is missing on the platform; kept so (PLATFORM_OUTSIDE_CHANGES=report)`,
    });
    return;
  }
  const { desired } = await tools.deps.source.load(pass.userId);
  const equivalents = (await tools.deps.source.equivalents?.()) ?? {};
  const terms = inSameTerms(desired, observed, equivalents);
  const outside = outsideAccess(terms.before, terms.after ?? observed);
  if (changes.length) await recordObserved(tools, account, observed);
  const kept = !isEmptyAccess(outside.granted) || !isEmptyAccess(outside.withdrawn);
  if (kept) await saveOutsideChange(db, { ...facts, change: "permissions", access: outside });
  else await clearOutsideChange(db, pass.userId);
  await tools.write(pass, "drift", "reported", changes, {
    after: observed,
    note: kept
      ? `${said}; kept (PLATFORM_OUTSIDE_CHANGES=report): ${outsideWords(outside)}`
      : `${said}; the account holds what the mapping grants`,
  });
}

/** "granted in the dashboard: export_user_data; taken away in the dashboard: view_campaigns". */
function outsideWords(outside: OutsideAccess): string {
  return [
    isEmptyAccess(outside.granted) ? "" : `granted in the dashboard: ${accessWords(outside.granted).join(", ")}`,
    isEmptyAccess(outside.withdrawn) ? "" : `taken away in the dashboard: ${accessWords(outside.withdrawn).join(", ")}`,
  ]
    .filter(Boolean)
    .join("; ");
}

/**
 * What was read becomes the last applied state. A stripped account stays stripped, its delete at
 * the same time; a missing one is forgotten (the plan creates it again when it is still wanted).
 */
async function recordObserved(
  tools: PassTools,
  account: PlatformAccount,
  observed: DesiredDashboardUser | null,
): Promise<void> {
  const { db, clock } = tools.deps;
  if (!observed) {
    await removeAccount(db, account.userId);
    return;
  }
  await recordApplied(db, account.userId, account.platformId!, observed, clock.now(), {
    verified: true,
    stripped: account.strippedAt ? { deleteAfter: account.deleteAfter ?? null } : undefined,
  });
}
