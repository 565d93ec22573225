import { Router } from "express";
import type { Database } from "../../../db/database.js";
import { z } from "zod";
import type { Clock } from "../../../clock.js";
import { mirrorParked, mirrorPushLog, requeueParked } from "../../../admin/mirror.js";
import { mirrorStatus } from "../../../mirror/status.js";
import { validate } from "../../validate.js";
import { actorOf } from "./auth.js";

/**
 * The mirror sync's part of the admin JSON API. Mounted under /admin/api behind the admin
 * authentication (the admin API router adds the bearer check, JSON parsing and error bodies):
 *
 *   GET  /mirror                 pending per table, oldest pending change's age, parked rows, last push
 *   GET  /mirror/log             the mirror-sync log, newest first (?kind=&cursor=&limit=)
 *   GET  /mirror/parked          parked changes with reasons (?kind=&limit=)
 *   POST /mirror/parked/requeue  {"kind"?, "keys"?: [...]} puts parked changes back in line
 */

export type MirrorAdminDeps = { db: Database; clock: Clock; onRequeue?: () => void };

const kind = z.enum(["email", "subscription_group", "preference_center"]);
const logQuery = z.object({
  kind: kind.optional(),
  cursor: z.string().regex(/^\d+$/).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});
const parkedQuery = z.object({ kind: kind.optional(), limit: z.coerce.number().int().min(1).max(1000).default(100) });
const requeueBody = z
  .object({ kind: kind.optional(), keys: z.array(z.string().min(1)).max(10_000).optional() })
  .strict();

export function mirrorAdminRouter(deps: MirrorAdminDeps): Router {
  const router = Router();

  router.get("/mirror", async (_req, res) => {
    res.json(await mirrorStatus(deps.db, deps.clock.now()));
  });

  router.get("/mirror/log", async (req, res) => {
    res.json(await mirrorPushLog(deps.db, validate(logQuery, req.query, "query")));
  });

  router.get("/mirror/parked", async (req, res) => {
    res.json({ parked: await mirrorParked(deps.db, validate(parkedQuery, req.query, "query")) });
  });

  router.post("/mirror/parked/requeue", async (req, res) => {
    const requeued = await requeueParked(deps.db, validate(requeueBody, req.body ?? {}), actorOf(res));
    deps.onRequeue?.();
    res.json({ requeued });
  });

  return router;
}
