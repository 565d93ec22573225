import type { AdminActor } from "../../admin/adminActor.js";

/**
 * The admin actor on the HTTP side (the type itself: src/admin/actor.ts). The session holds the
 * actor after sign-in; `loadActor` puts it on the request as `req.adminActor`, so every admin
 * action can be logged with who did it.
 */

declare module "express-session" {
  interface SessionData {
    actor?: AdminActor;
    /** When the actor signed in (epoch ms), stamped by the store: the start of the absolute lifetime. */
    signedInAt?: number;
    csrfToken?: string;
    /** A one-shot message shown on the next page (after a POST → redirect). */
    flash?: { kind: "ok" | "error"; text: string };
  }
}

declare global {
  namespace Express {
    interface Request {
      adminActor?: AdminActor;
    }
  }
}
