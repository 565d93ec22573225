import { CronExpressionParser } from "cron-parser";
import type { ResyncRun } from "../../db/reconcile/resyncRepository.js";
import type { AdminActor } from "../adminActor.js";
import type { Resyncs } from "./resyncs.js";

/** A run's status in a word or three: "running (verify)", "succeeded (dry run)". */
export function runStatus(run: Pick<ResyncRun, "status" | "phase" | "dryRun">): string {
  const parts = [
    run.status === "running" ? `running (${run.phase === "plan" ? "re-deriving" : "verifying"})` : run.status,
  ];
  if (run.dryRun) parts.push("dry run");
  return parts.join(" · ");
}

/** The next time the cron fires after `now`, or null when it is "off" or unreadable. */
export function nextFiring(cron: string, now: Date): Date | null {
  if (cron.trim().toLowerCase() === "off") return null;
  try {
    return CronExpressionParser.parse(cron, { currentDate: now, tz: "UTC" }).next().toDate();
  } catch {
    return null;
  }
}

/**
 * A resync run as the admin UI and the JSON API show it (`res.json` sends the dates as ISO
 * strings). `eta`: when verification should be done at the spare-budget pace, or null.
 */
export function presentRun(run: ResyncRun, eta: Date | null) {
  return {
    runId: run.id,
    status: run.status,
    phase: run.phase,
    dryRun: run.dryRun,
    verify: run.verify,
    trigger: run.trigger,
    actor: run.actor,
    startedAt: run.startedAt,
    finishedAt: run.finishedAt,
    progress: {
      usersTotal: run.usersTotal,
      usersEvaluated: run.usersEvaluated,
      usersQueued: run.usersQueued,
      verifyTotal: run.verifyTotal,
      verified: run.verified,
      drifted: run.drifted,
      callsSpent: run.callsSpent,
    },
    /** For a dry run: what would change, and the platform calls it would cost. */
    plan: run.planSummary,
    eta,
    error: run.error,
  };
}

export type RunView = ReturnType<typeof presentRun>;
export type RunsData = { runs: RunView[]; nextRunAt: Date | null };

export async function runsData(resyncs: Resyncs): Promise<RunsData> {
  return { runs: await resyncs.list(), nextRunAt: resyncs.nextRunAt() };
}

/** Starts a full resync from the UI's button (phase 1 runs in the background; the start is logged with the actor). */
export async function startResyncNow(resyncs: Resyncs, actor: AdminActor): Promise<string> {
  const verify = resyncs.verifyFromUi;
  const runId = await resyncs.start({ dryRun: false, verify, trigger: "ui", actor: actor.name });
  return `Full resync started (run ${runId.slice(0, 8)}). Changed users are queued behind live IdP changes${verify ? "; accounts are verified with spare budget" : ""}.`;
}
