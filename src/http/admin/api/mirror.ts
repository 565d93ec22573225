import { Router } from "express";
import { z } from "zod";
import type { MirrorAdmin } from "../../../admin/mirror.js";
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

export function mirrorAdminRouter(mirror: MirrorAdmin): Router {
  const router = Router();

  router.get("/mirror", async (_req, res) => {
    res.json(await mirror.status());
  });

  router.get("/mirror/log", async (req, res) => {
    res.json(await mirror.pushLog(validate(logQuery, req.query, "query")));
  });

  router.get("/mirror/parked", async (req, res) => {
    res.json({ parked: await mirror.parked(validate(parkedQuery, req.query, "query")) });
  });

  router.post("/mirror/parked/requeue", async (req, res) => {
    const requeued = await mirror.requeue(validate(requeueBody, req.body ?? {}), actorOf(res));
    res.json({ requeued });
  });

  return router;
}
