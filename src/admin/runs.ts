import { CronExpressionParser } from "cron-parser";
import { listRuns, type ResyncRun } from "../db/resyncRepository.js";
import { startResync } from "../jobs/resync.js";
import { resyncEta } from "../jobs/resyncEta.js";
import type { AdminActor } from "../http/admin/actor.js";
import type { OverviewData } from "../http/admin/ui/pages/overview.js";
import type { RunRow, RunsData } from "../http/admin/ui/pages/runs.js";
import type { AdminDataDeps, ResyncSettings } from "./deps.js";

/** A run's status in a word or three: "running (verify)", "succeeded (dry run)". */
export function runStatus(run: Pick<ResyncRun, "status" | "phase" | "dryRun">): string {
  const parts = [run.status === "running" ? `running (${run.phase === "plan" ? "re-deriving" : "verifying"})` : run.status];
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

const presentRun = (r: ResyncRun, eta: Date | null = null): RunRow => ({
  id: r.id,
  startedAt: r.startedAt,
  finishedAt: r.finishedAt,
  status: runStatus(r),
  evaluated: r.usersEvaluated,
  usersTotal: r.usersTotal,
  queued: r.usersQueued,
  verified: r.verified,
  verifyTotal: r.verifyTotal,
  drift: r.drifted,
  callsSpent: r.callsSpent,
  eta,
});

export async function runsData(deps: AdminDataDeps, resync: ResyncSettings): Promise<RunsData> {
  const runs = await listRuns(deps.db, 50);
  const now = deps.clock.now();
  const rows = await Promise.all(runs.map(async (r) => presentRun(r, await resyncEta(deps.db, deps.budget, r, now))));
  return { runs: rows, nextRunAt: nextFiring(resync.cron, now) };
}

export async function lastRuns(deps: AdminDataDeps): Promise<NonNullable<OverviewData["lastRuns"]>> {
  return (await listRuns(deps.db, 5)).map((r) => ({ ...presentRun(r), drift: r.drifted }));
}

/** Starts a full resync (phase 1 runs in the background; the start is logged with the actor). */
export async function startResyncNow(resync: ResyncSettings, actor: AdminActor): Promise<string> {
  const runId = await startResync(resync.deps, { dryRun: false, verify: resync.verify, trigger: "ui", actor: actor.name });
  return `Full resync started (run ${runId.slice(0, 8)}). Changed users are queued behind live IdP changes${resync.verify ? "; accounts are verified with spare budget" : ""}.`;
}
