/**
 * Phase 2 of a full resync for one account: the GET by id on spare budget, the comparison with
 * what was last applied, and the drift entry (enforced or reported). The reconciler calls it before
 * its plan when the queue row carries a verification.
 */
import type { PassTools, ReconcilePass } from "./pass.js";
import { clearVerification, countVerified } from "../db/reconcile/resyncRepository.js";
import { getAccount, markVerified, recordApplied, removeAccount } from "../db/platform/accountRepository.js";
import type { DirtyTrigger } from "../vocabulary/reconcile.js";
import type { DesiredDashboardUser } from "../mapping/types.js";
import type { HttpOutcome } from "../platform/transport.js";
import type { SpendKind } from "./budget/budget.js";
import { diffInSameTerms } from "./diff.js";
import { identifierKeysOf } from "../platform/scim.js";
import { resultOfFailure, type ReconcileResult } from "./outcomes.js";
import { BudgetExhausted } from "./ports.js";

/** The record of a pass that reads an account the connector knows (a verification, a platform check). */
export function readingPass(
  userName: string,
  lastApplied: DesiredDashboardUser,
  from: { userId: string; reconcileId: string; trigger: DirtyTrigger; resyncRunId: string | null },
): ReconcilePass {
  return {
    ...from,
    actor: null,
    userName,
    before: lastApplied,
    calls: 0,
    lastStatus: null,
    queuedAt: null,
  };
}

/**
 * Phase 2 of a full resync for one account: GET it by id with spare budget only, compare with
 * what was last applied, and log drift. With `drift: enforce` the observed state is recorded as
 * the last applied one, so the reconcile that follows puts the desired state back (a missing
 * account is recreated). Returns a result only when the verification could not be done now.
 */
export async function verifyAccount(
  tools: PassTools,
  userId: string,
  resyncRunId: string,
  reconcileId: string,
  trigger: DirtyTrigger,
): Promise<ReconcileResult | undefined> {
  const { db, clock } = tools.deps;
  const account = await getAccount(db, userId);
  if (!account?.platformId || !account.lastApplied) {
    await clearVerification(db, userId);
    return undefined;
  }
  const pass = readingPass(account.userName, account.lastApplied, { userId, reconcileId, trigger, resyncRunId });
  const read = await observeAccount(tools, pass, account.platformId, account.lastApplied, "verify");
  if ("kind" in read) return read;
  const { observed } = read;
  const enforce = tools.deps.drift === "enforce";

  // The platform may answer in granular terms what was applied in legacy ones (its migration):
  // the same access is no drift.
  const equivalents = (await tools.deps.source.equivalents?.()) ?? {};
  const changes = diffInSameTerms(account.lastApplied, observed, equivalents);
  if (changes.length) {
    await tools.write(pass, "drift", enforce ? "enforced" : "reported", changes, {
      after: observed,
      note: observed
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
  await countVerified(db, resyncRunId, userId, { drifted: changes.length > 0 });
  return undefined;
}

/**
 * One GET of the account by id, debited as `kind` just before it leaves: what the platform holds
 * (null: the account is missing), or the result to return when it could not be read now (no
 * budget, a failure: logged as a failed `verify`).
 */
export async function observeAccount(
  tools: PassTools,
  pass: ReconcilePass,
  platformId: string,
  lastApplied: DesiredDashboardUser,
  kind: SpendKind,
): Promise<{ observed: DesiredDashboardUser | null } | ReconcileResult> {
  let outcome: HttpOutcome;
  try {
    outcome = await tools.deps.platform.getUser(platformId, tools.spend(pass, "verify", kind));
  } catch (error) {
    if (error instanceof BudgetExhausted) return { kind: "budget", resetsAt: error.resetsAt };
    throw error;
  }
  tools.note(pass, outcome);
  if (outcome.kind === "ok") {
    const answered = tools.deps.platform.readResource(outcome.body, identifierKeysOf(lastApplied));
    if (answered) await tools.learnFrom(answered, null);
    return { observed: answered?.user ?? null };
  }
  if (outcome.kind === "http_error" && outcome.status === 404) return { observed: null };
  return tools.fail(pass, "verify", [], resultOfFailure(outcome), outcome);
}
