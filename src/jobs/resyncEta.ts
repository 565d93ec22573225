import type { Database } from "../db/database.js";
import { getBudgetStatus } from "../reconcile/budget/budgetLedger.js";
import type { ResyncRun } from "../db/reconcile/resyncRepository.js";
import { allowance, estimateDrain, type BudgetPolicy } from "../reconcile/budget/budget.js";

/** When a run's verification should be done at the spare-budget pace; null when nothing is left to verify. */
export async function resyncEta(db: Database, budget: BudgetPolicy, run: ResyncRun, now: Date): Promise<Date | null> {
  if (run.status !== "running" || run.phase !== "verify") return null;
  const status = await getBudgetStatus(db, budget, now);
  return estimateDrain(
    now,
    Math.max(0, run.verifyTotal - run.verified),
    status.spareForVerification,
    allowance(budget, "verify"),
    status.resetsAt,
  );
}
