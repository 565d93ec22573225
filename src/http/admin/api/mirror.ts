import { Router } from "express";
import type { Database } from "../../../db/database.js";
import { z } from "zod";
import type { Clock } from "../../../clock.js";
import { listParkedChanges, listPushLog, requeueParkedChanges } from "../../../db/mirrorStatusRepository.js";
import { BadRequestError } from "../../../errors.js";
import { log } from "../../../logging/logger.js";
import { mirrorStatus } from "../../../mirror/status.js";

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
    const q = parse(logQuery, req.query);
    const entries = await listPushLog(deps.db, {
      kind: q.kind,
      beforeId: q.cursor ? Number(q.cursor) : undefined,
      limit: q.limit,
    });
    res.json({ entries, nextCursor: entries.length === q.limit ? String(entries[entries.length - 1].id) : null });
  });

  router.get("/mirror/parked", async (req, res) => {
    const q = parse(parkedQuery, req.query);
    res.json({ parked: await listParkedChanges(deps.db, q) });
  });

  router.post("/mirror/parked/requeue", async (req, res) => {
    const body = parse(requeueBody, req.body ?? {});
    const requeued = await requeueParkedChanges(deps.db, body);
    log.info("mirror", "parked changes requeued", {
      kind: body.kind,
      keys: body.keys?.length,
      requeued,
      actor: res.locals.actor,
    });
    deps.onRequeue?.();
    res.json({ requeued });
  });

  return router;
}

function parse<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (!result.success)
    throw new BadRequestError(result.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; "));
  return result.data;
}
