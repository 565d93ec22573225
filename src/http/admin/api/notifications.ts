import { Router } from "express";
import { NotFoundError } from "../../../errors.js";
import type { Notifications } from "../../../notify/index.js";
import { actorOf } from "./auth.js";

/** GET /notifications and POST /notifications/test/:channel (mounted under /admin/api, admin token). Channels by host only. */
export function notificationsApiRouter(notifications: Pick<Notifications, "status" | "sendTest">): Router {
  const router = Router();
  router.get("/notifications", async (_req, res) => {
    res.json(await notifications.status());
  });
  router.post("/notifications/test/:channel", async (req, res) => {
    if (!(await notifications.sendTest(String(req.params.channel), actorOf(res))))
      throw new NotFoundError("No such notification channel is configured");
    res.status(202).json({ queued: String(req.params.channel) });
  });
  return router;
}
