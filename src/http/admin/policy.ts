import type { NextFunction, Request, Response } from "express";
import { log } from "../../logging/logger.js";
import { actorForLog, type AdminActor } from "../../admin/adminActor.js";
import { can, type AdminAction } from "../../policy.js";
import { rememberReturnPath } from "./auth/returnTo.js";
import { renderMessagePage } from "./ui/render.js";

/**
 * The admin UI's routes enforce src/policy.ts, where every authorization rule lives: a page or a
 * button needs an action that the signed-in actor's role is granted.
 */

/**
 * Anyone not signed in is sent to the sign-in page (GET, which comes back to the page asked for
 * once signed in) or refused (other methods).
 */
export function requireSignedIn(req: Request, res: Response, next: NextFunction): void {
  if (req.adminActor) return next();
  if (req.method === "GET" || req.method === "HEAD") {
    if (req.method === "GET") rememberReturnPath(req, res);
    res.redirect(303, `${req.baseUrl}/login`);
    return;
  }
  renderMessagePage(res, 401, "Sign-in required", "Your session has ended. Sign in again to continue.");
}

export function requireAction(action: AdminAction) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const actor: AdminActor | undefined = req.adminActor;
    if (!actor) return requireSignedIn(req, res, next);
    if (can(actor.role, action)) return next();
    log.warn("admin", "action forbidden", { action, actor: actorForLog(actor.name), role: actor.role, path: req.path });
    renderMessagePage(
      res,
      403,
      "Not allowed",
      `Your role (${actor.role}) cannot ${ACTION_WORDS[action]}. Ask an administrator if you need this.`,
    );
  };
}

const ACTION_WORDS: Record<AdminAction, string> = {
  read: "read this page",
  review: "decide access campaign items",
  reviewAnyone: "see or decide another reviewer's campaign items",
  approve: "approve or reject held changes",
  reconcile: "reconcile users on demand",
  resync: "start a full resync",
  resume: "resume a quarantined platform family",
  notifyTest: "send test notifications",
  campaign: "start or close access campaigns or lift their denies",
  evidence: "download evidence packs",
  oauthApprove: "approve OAuth clients (an IdP's provisioning connection)",
  platformEvents: "import the platform's Security Event report",
  mapping: "preview mapping drafts (a draft runs over every user, as putting it in force would)",
};
