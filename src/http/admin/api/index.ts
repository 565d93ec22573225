import express, { Router, type NextFunction, type Request, type Response } from "express";
import { z } from "zod";
import { AppError, NotFoundError, sqlState } from "../../../errors.js";
import { log } from "../../../logging/logger.js";
import type { Notifications } from "../../../notify/index.js";
import type { PlatformQuarantine } from "../../../platform/quarantine.js";
import type { AccessReport } from "../../../review/access/index.js";
import type { AdminApiOperations } from "../../../admin/apiOperations.js";
import type { FailedAuthThrottle } from "../../../auth/authThrottle.js";
import { validate } from "../../validate.js";
import { accessApiRouter } from "./access.js";
import { evidenceApiRouter } from "./evidence.js";
import { campaignsApiRouter } from "./campaigns.js";
import { actorOf, requireAdminToken } from "./auth.js";
import { mirrorAdminRouter } from "./mirror.js";
import { notificationsApiRouter } from "./notifications.js";
import { platformUnmanagedApiRouter } from "./platformUnmanaged.js";
import { quarantineApiRouter } from "./quarantine.js";
import { platformApiRouter } from "./platform.js";
import type { PlatformRecord } from "../../../platformRecord/frontDoor.js";
import type { Evidence } from "../../../review/evidence/frontDoor.js";
import type { Campaigns } from "../../../review/campaigns/frontDoor.js";
import type { MirrorAdmin } from "../../../admin/mirror.js";
import type { Resyncs } from "../../../admin/runs/resyncs.js";
import { runsApiRouter } from "./runs.js";
import { isUuid } from "../../../ids.js";

export type AdminApiDeps = {
  /** The log, budget, queue, held actions and permission model (src/admin/apiOperations.ts). */
  operations: AdminApiOperations;
  adminToken: string | undefined;
  /** Failed bearer tokens; createApp gives one shared with the other replicas. */
  throttle?: FailedAuthThrottle;
  /** Provision on demand (jumps the queue, spends budget); a 503 AppError when this process reconciles nothing. */
  reconcileNow: (userId: string, actor: string) => Promise<unknown>;
  /** Full resyncs: POST /resync, GET /runs (src/admin/runs/resyncs.ts). */
  resync: Resyncs;
  /** GET /quarantine, POST /quarantine/:family/resume. */
  quarantine: Pick<PlatformQuarantine, "list" | "resume" | "rules">;
  /** GET /notifications, POST /notifications/test/:channel. */
  notifications: Pick<Notifications, "status" | "sendTest">;
  /** GET /mirror and friends, POST /mirror/parked/requeue (src/admin/mirror.ts). */
  mirror: MirrorAdmin;
  /** The access report, the one the admin pages read (built once, in service.ts). */
  access: AccessReport;
  /** GET/POST /evidence: the signed packs (src/review/evidence/frontDoor.ts); without a key they answer 409. */
  evidence: Evidence;
  /** /campaigns and /denies (src/review/campaigns/frontDoor.ts). */
  campaigns: Campaigns;
  /** POST /platform/events and GET /platform/unmanaged: the platform's record (src/platformRecord/frontDoor.ts). */
  platformRecord: PlatformRecord;
};

const logQuery = z.object({
  user: z.string().max(320).optional(),
  action: z.string().max(40).optional(),
  outcome: z.string().max(40).optional(),
  trigger: z.string().max(40).optional(),
  since: z.iso.datetime({ offset: true }).optional(),
  until: z.iso.datetime({ offset: true }).optional(),
  cursor: z.string().regex(/^\d+$/).optional(),
  limit: z.coerce.number().int().min(1).max(1000).optional(),
});

/** The admin JSON API under /admin/api: bearer-token only (no cookies, so no CSRF surface). */
export function adminApiRouter(deps: AdminApiDeps): Router {
  const router = Router();
  router.use(requireAdminToken(deps.adminToken, deps.throttle));
  // Only POST routes take a body (after the token check): nothing is parsed on GET.
  const json = express.json({ limit: "64kb" });
  router.use((req, res, next) => (req.method === "POST" ? json(req, res, next) : next()));

  router.get("/log", async (req, res) => {
    res.json(await deps.operations.log(validate(logQuery, req.query, "query")));
  });

  router.get("/log/:id", async (req, res) => {
    const entry = await deps.operations.logEntry(String(req.params.id));
    if (!entry) throw new NotFoundError("No log entry with that id");
    res.json(entry);
  });

  router.get("/permissions", async (_req, res) => {
    res.json(await deps.operations.permissions());
  });

  router.get("/budget", async (_req, res) => {
    res.json(await deps.operations.budget());
  });

  router.get("/queue", async (_req, res) => {
    res.json(await deps.operations.queue());
  });

  router.get("/approvals", async (req, res) => {
    res.json({ holds: await deps.operations.holds(req.query.all !== "true") });
  });

  router.post("/approvals/:userId/:decision", async (req, res) => {
    const decision = decisionOf(String(req.params.decision));
    const userId = String(req.params.userId);
    if (userId === "all") {
      res.json({ decided: await deps.operations.decideAllHolds(decision, actorOf(res)) });
      return;
    }
    assertUuid(userId);
    const hold = await deps.operations.decideHold(userId, decision, actorOf(res));
    if (!hold) throw new NotFoundError("No undecided hold for that user");
    res.json(hold);
  });

  router.post("/users/:userId/reconcile", async (req, res) => {
    const userId = String(req.params.userId);
    assertUuid(userId);
    const result = await deps.reconcileNow(userId, actorOf(res));
    res.json({ result });
  });

  router.use(accessApiRouter(deps.access));
  router.use(platformUnmanagedApiRouter(deps.platformRecord));
  router.use(evidenceApiRouter(deps.evidence));
  router.use(campaignsApiRouter(deps.campaigns));
  router.use(runsApiRouter(deps.resync));
  router.use(mirrorAdminRouter(deps.mirror));
  router.use(quarantineApiRouter(deps.quarantine));
  router.use(platformApiRouter(deps.platformRecord));
  router.use(notificationsApiRouter(deps.notifications));

  router.use((_req, _res, next) => next(new NotFoundError("No such admin API route")));
  router.use(adminApiErrors);
  return router;
}

function decisionOf(word: string): "approved" | "rejected" {
  if (word === "approve") return "approved";
  if (word === "reject") return "rejected";
  throw new NotFoundError("Use /approve or /reject");
}

function assertUuid(id: string): void {
  if (!isUuid(id)) throw new NotFoundError("No user with that id");
}

/** The /admin/api error translator: JSON bodies, never a stack. */
function adminApiErrors(error: unknown, _req: Request, res: Response, _next: NextFunction): void {
  if (error instanceof AppError) {
    res.status(error.status).json({ error: error.name, message: error.message });
    return;
  }
  const status = (error as { status?: unknown; type?: unknown })?.status;
  if (typeof status === "number" && status >= 400 && status < 500) {
    res.status(status).json({ error: "BadRequest", message: "The request could not be read" });
    return;
  }
  if (sqlState(error)?.startsWith("22")) {
    res.status(400).json({ error: "BadRequest", message: "A value in the request cannot be used" });
    return;
  }
  log.error("admin-api", "unexpected error", { error });
  res.status(500).json({ error: "InternalError", message: "Something went wrong; see the service log" });
}
