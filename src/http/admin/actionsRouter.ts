import { Router, type Request, type Response } from "express";
import { AppError } from "../../errors.js";
import { log } from "../../logging/logger.js";
import { actorForLog } from "../../admin/adminActor.js";
import { requireAction } from "./policy.js";
import type { AdminAction } from "../../policy.js";
import { saveSession } from "./session/index.js";
import type { AdminActions } from "../../admin/sources.js";

/**
 * The buttons: POST → authorize (policy.ts) → run the action → redirect back with a message.
 * CSRF was checked before this router. Every action is logged here with who did it; the action
 * itself writes the reconciliation-log entry.
 */
export function actionsRouter(actions: AdminActions): Router {
  const router = Router();

  const handle = (
    path: string,
    action: AdminAction,
    name: keyof AdminActions,
    run: (req: Request) => Promise<string>,
    back: (req: Request) => string,
  ) =>
    router.post(path, requireAction(action), async (req: Request, res: Response) => {
      const actor = req.adminActor!;
      try {
        const message = await run(req);
        log.info("admin", "admin action", {
          action: name,
          actor: actorForLog(actor.name),
          role: actor.role,
          via: actor.via,
        });
        req.session.flash = { kind: "ok", text: message };
      } catch (error) {
        if (!(error instanceof AppError) || error.status >= 500) throw error;
        log.info("admin", "admin action refused", {
          action: name,
          actor: actorForLog(actor.name),
          reason: error.message,
        });
        req.session.flash = { kind: "error", text: error.message };
      }
      await saveSession(req); // before the redirect, which the browser follows as soon as it arrives
      res.redirect(303, back(req));
    });

  const base = (req: Request) => req.baseUrl || "/admin";
  const body = (req: Request) => (req.body ?? {}) as Record<string, unknown>;
  const selection = (req: Request): string[] | "all" => {
    if (body(req).all === "1") return "all";
    const ids = body(req).id;
    return (Array.isArray(ids) ? ids : ids === undefined ? [] : [ids]).map(String).filter(Boolean);
  };

  handle(
    "/approvals/approve",
    "approve",
    "approve",
    (req) => actions.approve(selection(req), req.adminActor!),
    (req) => `${base(req)}/approvals`,
  );
  handle(
    "/approvals/reject",
    "approve",
    "reject",
    (req) => actions.reject(selection(req), req.adminActor!),
    (req) => `${base(req)}/approvals`,
  );
  handle(
    "/users/:id/reconcile",
    "reconcile",
    "reconcileNow",
    (req) => actions.reconcileNow(String(req.params.id), req.adminActor!),
    (req) => `${base(req)}/users/${encodeURIComponent(String(req.params.id))}`,
  );
  handle(
    "/quarantine/:family/resume",
    "resume",
    "resumeFamily",
    (req) => actions.resumeFamily(String(req.params.family), req.adminActor!),
    (req) => base(req),
  );
  handle(
    "/notifications/test/:channel",
    "notifyTest",
    "sendTestNotification",
    (req) => actions.sendTestNotification(String(req.params.channel), req.adminActor!),
    (req) => `${base(req)}/notifications`,
  );
  handle(
    "/runs/resync",
    "resync",
    "startResync",
    (req) => actions.startResync(req.adminActor!),
    (req) => `${base(req)}/runs`,
  );
  return router;
}
