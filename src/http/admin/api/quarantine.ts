import { Router } from "express";
import { NotFoundError } from "../../../errors.js";
import { presentQuarantine } from "../../../admin/quarantineView.js";
import type { PlatformQuarantine } from "../../../platform/quarantine.js";
import { actorOf } from "./auth.js";

/** GET /quarantine and POST /quarantine/:family/resume (mounted under /admin/api, admin token). */
export function quarantineApiRouter(quarantine: Pick<PlatformQuarantine, "list" | "resume" | "rules">): Router {
  const router = Router();
  router.get("/quarantine", async (_req, res) => {
    const { rules } = quarantine;
    res.json({
      families: (await quarantine.list()).map(presentQuarantine),
      rules: {
        enabled: rules.enabled,
        authFailures: rules.authFailures,
        failureRatePercent: rules.failureRatePercent,
        window: rules.window,
        minCalls: rules.minCalls,
        coolingSeconds: rules.coolingMs / 1000,
      },
    });
  });
  router.post("/quarantine/:family/resume", async (req, res) => {
    const row = await quarantine.resume(String(req.params.family), actorOf(res));
    if (!row) throw new NotFoundError("That family is not quarantined");
    res.json({ resumed: row.family });
  });
  return router;
}
