import { parseArgs } from "node:util";
import type { Database } from "../db/database.js";
import { systemClock } from "../clock.js";
import type { Env } from "../config/env.js";
import { getBudgetStatus } from "../reconcile/budget/budgetLedger.js";
import type { ProgressListener } from "../jobs/resync.js";
import { createResyncs } from "../admin/runs/resyncs.js";
import { daysAtPace } from "../jobs/resyncCost.js";
import { allowance } from "../reconcile/budget/budget.js";
import { budgetPolicyFromEnv, reconcilePoliciesFromEnv } from "../reconcile/index.js";
import { MappingStore } from "../mapping/store.js";
import { DesiredAccess } from "../mapping/desiredAccess.js";
import { cliActor } from "./commandActor.js";

/**
 * `scim-connector resync [--dry-run] [--verify]`: phase 1 of a full resync in this process, with a
 * progress bar on a terminal and plain lines otherwise. The running service's workers do the
 * queued work and phase 2; a dry run only reports what would change and what it would cost.
 */
export async function resyncCommand(env: Env, db: Database, args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { "dry-run": { type: "boolean" }, verify: { type: "boolean" }, as: { type: "string" } },
  });
  const dryRun = values["dry-run"] ?? false;
  const verify = values.verify ?? false;
  const desired = new DesiredAccess(await MappingStore.load(env.MAPPING_FILE));
  const policy = budgetPolicyFromEnv(env);
  const resyncs = createResyncs({
    job: { db, clock: systemClock, desired, policies: reconcilePoliciesFromEnv(env) },
    budget: policy,
    cron: env.RESYNC_CRON,
    verify: env.RESYNC_VERIFY,
  });
  const run = await resyncs.runHere(
    { dryRun, verify, trigger: "cli", actor: cliActor(values.as) },
    progressReporter(process.stderr),
    (runId) => console.log(`${dryRun ? "Dry run" : "Resync"} ${runId}${verify ? " (with verification)" : ""}`),
  );
  const runId = run.id;

  const budget = await getBudgetStatus(db, policy, new Date());
  const { calls = 0, verify: verifications = 0, ...actions } = run.planSummary;
  console.log(`\nEvaluated ${run.usersEvaluated} users; ${dryRun ? "would queue" : "queued"} ${run.usersQueued}.`);
  for (const [action, count] of Object.entries(actions).sort()) console.log(`  ${action.padEnd(16)} ${count}`);
  console.log(
    `Platform calls for the changes: ${calls} (${describeDays(daysAtPace(calls, budget.remaining, allowance(policy, "ordinary")))} at the daily budget).`,
  );
  if (verify) {
    console.log(
      `Accounts to verify: ${verifications} (${describeDays(daysAtPace(verifications, budget.spareForVerification, allowance(policy, "verify")))} of spare budget).`,
    );
    if (!dryRun)
      console.log(`Verification continues in the service's workers; follow it with GET /admin/api/runs/${runId}.`);
  }
  if (dryRun) console.log("Nothing was queued and no budget was spent.");
}

function describeDays(days: number): string {
  if (days === 0) return "within today's budget";
  return Number.isFinite(days) ? `about ${days} more day${days === 1 ? "" : "s"}` : "never, with no budget configured";
}

/** A bar redrawn in place on a terminal; a line per 10% otherwise (logs, CI). */
function progressReporter(out: NodeJS.WriteStream): ProgressListener {
  let lastDecile = -1;
  return ({ evaluated, total, queued }) => {
    const fraction = total > 0 ? Math.min(1, evaluated / total) : 1;
    if (out.isTTY) {
      const width = 30;
      const filled = Math.round(fraction * width);
      out.write(
        `\r[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${Math.round(fraction * 100)}%  ${evaluated}/${total} users, ${queued} queued`,
      );
      if (fraction === 1) out.write("\n");
      return;
    }
    const decile = Math.floor(fraction * 10);
    if (decile !== lastDecile) {
      lastDecile = decile;
      out.write(`resync: ${evaluated}/${total} users evaluated, ${queued} queued\n`);
    }
  };
}
