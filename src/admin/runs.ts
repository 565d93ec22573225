import { CronExpressionParser } from "cron-parser";
import type { Database } from "../db/database.js";
import { getRun, listRuns, type ResyncRun } from "../db/reconcile/resyncRepository.js";
import { startResync } from "../jobs/resync.js";
import { resyncEta } from "../jobs/resyncEta.js";
import type { AdminActor } from "./adminActor.js";
import type { BudgetPolicy } from "../reconcile/budget.js";
import type { AdminDataDeps, ResyncSettings } from "./deps.js";

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

/** A run with its verification ETA at the budget's current pace. */
async function presentRunWithEta(
  deps: { db: Database; budget: BudgetPolicy },
  run: ResyncRun,
  now: Date,
): Promise<RunView> {
  return presentRun(run, await resyncEta(deps.db, deps.budget, run, now));
}

type RunDeps = Pick<AdminDataDeps, "db" | "clock" | "budget">;

/** The last 50 runs, newest first, each with its ETA (the Runs page, GET /admin/api/runs). */
export async function runViews(deps: RunDeps): Promise<RunView[]> {
  const now = deps.clock.now();
  return Promise.all((await listRuns(deps.db, 50)).map((r) => presentRunWithEta(deps, r, now)));
}

/** One run with its ETA (GET /admin/api/runs/:runId); undefined when no run has that id. */
export async function runView(deps: RunDeps, runId: string): Promise<RunView | undefined> {
  const run = await getRun(deps.db, runId);
  return run && presentRunWithEta(deps, run, deps.clock.now());
}

export async function runsData(deps: AdminDataDeps, resync: ResyncSettings): Promise<RunsData> {
  return { runs: await runViews(deps), nextRunAt: nextFiring(resync.cron, deps.clock.now()) };
}

/** The overview's last runs (no ETA). */
export async function lastRuns(deps: AdminDataDeps): Promise<RunView[]> {
  return (await listRuns(deps.db, 5)).map((r) => presentRun(r, null));
}

/** Starts a full resync (phase 1 runs in the background; the start is logged with the actor). */
export async function startResyncNow(resync: ResyncSettings, actor: AdminActor): Promise<string> {
  const runId = await startResync(resync.deps, {
    dryRun: false,
    verify: resync.verify,
    trigger: "ui",
    actor: actor.name,
  });
  return `Full resync started (run ${runId.slice(0, 8)}). Changed users are queued behind live IdP changes${resync.verify ? "; accounts are verified with spare budget" : ""}.`;
}
