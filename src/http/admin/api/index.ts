import type { KeyObject } from "node:crypto";
import express, { Router, type NextFunction, type Request, type Response } from "express";
import type { Database } from "../../../db/database.js";
import { z } from "zod";
import type { Clock } from "../../../clock.js";
import { getBudgetStatus } from "../../../reconcile/budgetLedger.js";
import { listHolds } from "../../../db/holdRepository.js";
import { getLogEntry, listLog } from "../../../db/reconcileLogRepository.js";
import { AppError, BadRequestError, NotFoundError, sqlState } from "../../../errors.js";
import { log } from "../../../logging/logger.js";
import { decide, decideAll } from "../../../reconcile/approvals.js";
import type { BudgetPolicy } from "../../../reconcile/budget.js";
import { queueStatus } from "../../../reconcile/queueStatus.js";
import type { ResyncDeps } from "../../../jobs/resync.js";
import type { Notifications } from "../../../notify/index.js";
import type { PlatformQuarantine } from "../../../platform/quarantine.js";
import type { FailedAuthThrottle } from "../../authThrottle.js";
import { presentHold } from "../../../admin/approvals.js";
import { presentLogEntry } from "../../../admin/log.js";
import { presentBudget, presentQueue } from "../../../admin/queue.js";
import { accessApiRouter } from "./access.js";
import { evidenceApiRouter } from "./evidence.js";
import { campaignsApiRouter } from "./campaigns.js";
import { requireAdminToken } from "./auth.js";
import { mirrorAdminRouter } from "./mirror.js";
import { notificationsApiRouter } from "./notifications.js";
import { quarantineApiRouter } from "./quarantine.js";
import { runsApiRouter } from "./runs.js";
import { isUuid } from "../../../ids.js";

export type AdminApiDeps = {
  db: Database;
  clock: Clock;
  adminToken: string | undefined;
  /** Failed bearer tokens; createApp gives one shared with the other replicas. */
  throttle?: FailedAuthThrottle;
  budget: BudgetPolicy;
  /** Provision on demand (jumps the queue, spends budget); a 503 AppError when this process reconciles nothing. */
  reconcileNow: (userId: string, actor: string) => Promise<unknown>;
  /** Full resyncs: POST /resync, GET /runs. */
  resync: ResyncDeps;
  /** GET /quarantine, POST /quarantine/:family/resume. */
  quarantine: Pick<PlatformQuarantine, "list" | "resume" | "rules">;
  /** GET /notifications, POST /notifications/test/:channel. */
  notifications: Pick<Notifications, "status" | "sendTest">;
  /** Wakes this process's mirror worker after parked changes are requeued. */
  onMirrorRequeue?: () => void;
  /** Where the mapping in force was read from (the access report names rules by file and line). */
  mappingFile?: string;
  /** Signs evidence packs (EVIDENCE_SIGNING_KEY); without it GET/POST /evidence answer 409. */
  evidenceSigningKey?: KeyObject;
  /** CAMPAIGN_UNDECIDED_AT_CLOSE: what closing a campaign does with undecided items. */
  campaignUndecidedAtClose?: "keep" | "revoke";
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
    const q = parse(logQuery, req.query);
    const page = await listLog(deps.db, {
      ...q,
      since: q.since ? new Date(q.since) : undefined,
      until: q.until ? new Date(q.until) : undefined,
      before: q.cursor,
    });
    res.json({ entries: page.entries.map(presentLogEntry), nextCursor: page.nextCursor });
  });

  router.get("/log/:id", async (req, res) => {
    const entry = await getLogEntry(deps.db, String(req.params.id));
    if (!entry) throw new NotFoundError("No log entry with that id");
    res.json(presentLogEntry(entry));
  });

  router.get("/budget", async (_req, res) => {
    res.json(presentBudget(await getBudgetStatus(deps.db, deps.budget, deps.clock.now())));
  });

  router.get("/queue", async (_req, res) => {
    res.json(presentQueue(await queueStatus(deps.db, deps.budget, deps.clock.now())));
  });

  router.get("/approvals", async (req, res) => {
    const holds = await listHolds(deps.db, { pendingOnly: req.query.all !== "true" });
    res.json({ holds: holds.map(presentHold) });
  });

  router.post("/approvals/:userId/:decision", async (req, res) => {
    const decision = decisionOf(String(req.params.decision));
    const userId = String(req.params.userId);
    if (userId === "all") {
      res.json({ decided: await decideAll(deps.db, decision, actorOf(res), deps.clock.now()) });
      return;
    }
    assertUuid(userId);
    const hold = await decide(deps.db, userId, decision, actorOf(res), deps.clock.now());
    if (!hold) throw new NotFoundError("No undecided hold for that user");
    res.json(presentHold(hold));
  });

  router.post("/users/:userId/reconcile", async (req, res) => {
    const userId = String(req.params.userId);
    assertUuid(userId);
    const result = await deps.reconcileNow(userId, actorOf(res));
    res.json({ result });
  });

  router.use(accessApiRouter(deps));
  router.use(evidenceApiRouter(deps));
  router.use(
    campaignsApiRouter({ db: deps.db, clock: deps.clock, undecidedAtClose: deps.campaignUndecidedAtClose ?? "keep" }),
  );
  router.use(runsApiRouter({ ...deps.resync, budget: deps.budget }));
  router.use(
    mirrorAdminRouter({
      db: deps.db,
      clock: deps.clock,
      ...(deps.onMirrorRequeue ? { onRequeue: deps.onMirrorRequeue } : {}),
    }),
  );
  router.use(quarantineApiRouter(deps.quarantine));
  router.use(notificationsApiRouter(deps.notifications));

  router.use((_req, _res, next) => next(new NotFoundError("No such admin API route")));
  router.use(adminApiErrors);
  return router;
}

function parse<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (!result.success)
    throw new BadRequestError(result.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "));
  return result.data;
}

function decisionOf(word: string): "approved" | "rejected" {
  if (word === "approve") return "approved";
  if (word === "reject") return "rejected";
  throw new NotFoundError("Use /approve or /reject");
}

function assertUuid(id: string): void {
  if (!isUuid(id)) throw new NotFoundError("No user with that id");
}

function actorOf(res: Response): string {
  return typeof res.locals.actor === "string" ? res.locals.actor : "admin-api";
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
