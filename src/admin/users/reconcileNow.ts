import { knownUserName } from "../../db/idp/userAdminQueries.js";
import { writeLogEntry } from "../../db/reconcile/logRepository.js";
import type { LogOutcome } from "../../vocabulary/reconcile.js";
import { logWords } from "../../db/reconcile/logWords.js";
import { AppError, NotFoundError } from "../../errors.js";
import type { ReconcileResult } from "../../reconcile/outcomes.js";
import type { AdminActor } from "../adminActor.js";
import type { AdminDataDeps } from "../deps.js";

/**
 * How a reconcile-on-demand ended, for its log entry (its words: the error, or the note of an
 * entry that did not fail) and the admin's confirmation. Pure.
 */
export function reconcileNowReport(
  result: ReconcileResult | "busy",
  userName: string,
): { outcome: LogOutcome; message: string; words: string | null } {
  if (result === "busy") {
    return {
      outcome: "retrying",
      message: `${userName} is being reconciled right now; the result will appear in the log shortly.`,
      words: "another worker held the user",
    };
  }
  switch (result.kind) {
    case "requeue":
      return {
        outcome: "succeeded",
        message: `Reconciled ${userName}: access removed; the account is kept until ${result.at.toISOString()}, then deleted.`,
        words: null,
      };
    case "done":
      return {
        outcome: "succeeded",
        message: `Reconciled ${userName}. The log below shows what, if anything, changed.`,
        words: null,
      };
    case "retry":
      return {
        outcome: "retrying",
        message: `Reconciling ${userName} failed and will be retried: ${result.error}`,
        words: result.error,
      };
    case "rate_limited":
      return {
        outcome: "retrying",
        message: `The platform asked to wait; ${userName} will be retried after ${result.until.toISOString()}.`,
        words: "rate limited",
      };
    case "budget":
      return {
        outcome: "deferred-for-budget",
        message: `Today's platform budget is spent; ${userName} will be reconciled after ${result.resetsAt.toISOString()}.`,
        words: "budget exhausted",
      };
    case "terminal":
      return { outcome: "failed", message: `Reconciling ${userName} failed: ${result.error}`, words: result.error };
  }
}

/**
 * Provision on demand: the worker marks, claims and reconciles the user at once (the
 * reconciler logs any platform change with the actor). This adds the receipt: who asked, and
 * how it ended, even when nothing needed changing.
 */
export async function reconcileWithReceipt(
  deps: AdminDataDeps,
  userId: string,
  actor: string,
): Promise<{ result: ReconcileResult | "busy"; message: string }> {
  if (!deps.reconcileNow) throw new AppError("Reconciling is not running in this process", 503);
  const userName = await knownUserName(deps.db, userId);
  if (!userName) throw new NotFoundError("There is no user with that id");
  const result = await deps.reconcileNow(userId, actor);
  const report = reconcileNowReport(result, userName);
  await writeLogEntry(deps.db, {
    at: deps.clock.now(),
    userId,
    userName,
    action: "reconcile-now",
    ...logWords(report.outcome, report.words),
    trigger: { kind: "admin", actor },
    actor,
  });
  return { result, message: report.message };
}

/** The UI's button: the confirmation sentence. */
export async function reconcileUserNow(deps: AdminDataDeps, userId: string, actor: AdminActor): Promise<string> {
  return (await reconcileWithReceipt(deps, userId, actor.name)).message;
}
