import { Router } from "express";
import type { Database } from "../db/database.js";
import type { MappingAgreement } from "../mapping/store.js";

/**
 * /healthz: the process is alive. /readyz: the database answers, every migration is applied, and
 * the process is not shutting down (`draining`: from the first SIGTERM on, so load balancers stop sending);
 * its `mapping` says whether this replica's mapping file is the one in force.
 */
export function healthRouter(
  db: Database,
  draining: () => boolean = () => false,
  mappingAgreement?: () => Promise<MappingAgreement>,
): Router {
  const router = Router();
  router.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });
  router.get("/readyz", async (_req, res) => {
    if (draining()) {
      res.status(503).json({ status: "not ready", reason: "shutting down" });
      return;
    }
    try {
      await db.query("SELECT 1");
      if (!(await db.isMigrated())) {
        res.status(503).json({ status: "not ready", reason: "migrations pending" });
        return;
      }
      // A mapping file that is not the one in force leaves the process ready (it serves SCIM), and says so.
      res.json({ status: "ready", ...(mappingAgreement ? { mapping: await mappingAgreement() } : {}) });
    } catch {
      res.status(503).json({ status: "not ready", reason: "database unreachable" });
    }
  });
  return router;
}
