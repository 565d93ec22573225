import type { NextFunction, Request, RequestHandler, Response } from "express";
import session from "express-session";
import type { Clock } from "../../../clock.js";
import type { AdminSessions } from "../../../admin/sessions.js";
import type { AdminActor } from "../../../admin/adminActor.js";
import { PgSessionStore } from "./pgSessionStore.js";

export const SESSION_COOKIE = "scim_admin_sid";

/**
 * Admin UI sessions: stored in PostgreSQL, rolling idle timeout and an absolute lifetime from
 * sign-in (ADMIN_SESSION_MAX_AGE_HOURS, so a role removed in the IdP takes effect), cookie HttpOnly + SameSite=Lax,
 * Secure whenever the request came over TLS (directly or via a trusted proxy). The cookie
 * signing key comes from the database, so it is built on the first request.
 */
export function adminSession(options: {
  sessions: AdminSessions;
  clock: Clock;
  idleMinutes: number;
  maxAgeHours: number;
}): RequestHandler {
  const idleMs = options.idleMinutes * 60_000;
  const maxAgeMs = Math.round(options.maxAgeHours * 3_600_000);
  let middleware: Promise<RequestHandler> | undefined;
  const build = async (): Promise<RequestHandler> =>
    session({
      name: SESSION_COOKIE,
      secret: await options.sessions.getCookieSecret(),
      store: new PgSessionStore(options.sessions, options.clock, { idleMs, maxAgeMs }),
      resave: false,
      saveUninitialized: false,
      rolling: true,
      proxy: undefined, // follow the app's "trust proxy"
      cookie: { path: "/admin", httpOnly: true, sameSite: "lax", secure: "auto", maxAge: idleMs },
    });
  return (req: Request, res: Response, next: NextFunction) => {
    middleware ??= build();
    middleware.then(
      (handler) => handler(req, res, next),
      (error: unknown) => {
        middleware = undefined; // try again on the next request
        next(error);
      },
    );
  };
}

/** Starts a signed-in session under a NEW id (so a pre-login id planted by someone else is useless). */
export async function establishSession(req: Request, actor: AdminActor): Promise<void> {
  await new Promise<void>((resolve, reject) =>
    req.session.regenerate((err: unknown) => (err ? reject(err) : resolve())),
  );
  req.session.actor = actor;
  await saveSession(req);
}

/**
 * Stores the session now. Call it before redirecting after a change to the session: express-session
 * saves at `res.end` but writes the response's head before that save has finished, so a browser
 * that follows the redirect at once reads the session as it was (a flash message lost, and shown a
 * page later).
 */
export async function saveSession(req: Request): Promise<void> {
  await new Promise<void>((resolve, reject) => req.session.save((err: unknown) => (err ? reject(err) : resolve())));
}

export async function endSession(req: Request): Promise<void> {
  await new Promise<void>((resolve, reject) => req.session.destroy((err: unknown) => (err ? reject(err) : resolve())));
}

/** Puts the session's actor on the request (`req.adminActor`). */
export function loadActor(req: Request, _res: Response, next: NextFunction): void {
  const actor = req.session?.actor;
  if (actor) req.adminActor = actor;
  next();
}
