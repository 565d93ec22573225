import { Router } from "express";
import { z } from "zod";
import { presentRunWithEta } from "../../../admin/runs.js";
import { getRun, listRuns } from "../../../db/resyncRepository.js";
import { BadRequestError, NotFoundError } from "../../../errors.js";
import { startResync, type ResyncDeps } from "../../../jobs/resync.js";
import type { BudgetPolicy } from "../../../reconcile/budget.js";

const resyncBody = z.strictObject({ dryRun: z.boolean().default(false), verify: z.boolean().default(false) });

/** POST /resync, GET /runs, GET /runs/:runId (mounted under /admin/api). */
export function runsApiRouter(deps: ResyncDeps & { budget: BudgetPolicy }): Router {
  const router = Router();
  router.post("/resync", async (req, res) => {
    const parsed = resyncBody.safeParse(req.body ?? {});
    if (!parsed.success)
      throw new BadRequestError(
        parsed.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; "),
      );
    const actor = typeof res.locals.actor === "string" ? res.locals.actor : "admin-api";
    const runId = await startResync(deps, { ...parsed.data, trigger: "api", actor });
    res.status(202).location(`${req.baseUrl}/runs/${runId}`).json({ runId });
  });
  router.get("/runs", async (_req, res) => {
    const runs = await listRuns(deps.db, 50);
    res.json({ runs: await Promise.all(runs.map((r) => presentRunWithEta(deps, r, deps.clock.now()))) });
  });
  router.get("/runs/:runId", async (req, res) => {
    const run = await getRun(deps.db, String(req.params.runId));
    if (!run) throw new NotFoundError("No resync run with that id");
    res.json(await presentRunWithEta(deps, run, deps.clock.now()));
  });
  return router;
}
