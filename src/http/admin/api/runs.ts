import { Router } from "express";
import { z } from "zod";
import type { Resyncs } from "../../../admin/runs/resyncs.js";
import { NotFoundError } from "../../../errors.js";
import { validate } from "../../validate.js";
import { actorOf } from "./auth.js";

const resyncBody = z.strictObject({ dryRun: z.boolean().default(false), verify: z.boolean().default(false) });

/** POST /resync, GET /runs, GET /runs/:runId (mounted under /admin/api). */
export function runsApiRouter(resyncs: Resyncs): Router {
  const router = Router();
  router.post("/resync", async (req, res) => {
    const body = validate(resyncBody, req.body ?? {});
    const runId = await resyncs.start({ ...body, trigger: "api", actor: actorOf(res) });
    res.status(202).location(`${req.baseUrl}/runs/${runId}`).json({ runId });
  });
  router.get("/runs", async (_req, res) => {
    res.json({ runs: await resyncs.list() });
  });
  router.get("/runs/:runId", async (req, res) => {
    const run = await resyncs.get(String(req.params.runId));
    if (!run) throw new NotFoundError("No resync run with that id");
    res.json(run);
  });
  return router;
}
