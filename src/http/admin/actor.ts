/**
 * Who is using the admin UI. The session holds the actor after sign-in; `loadActor` puts it on
 * the request as `req.adminActor`, so every admin action can be logged with who did it.
 */

export type AdminRole = "viewer" | "admin";

export type AdminActor = {
  /** The SAML NameID (normally the email), or "local admin" for ADMIN_TOKEN sign-in. */
  name: string;
  role: AdminRole;
  via: "saml" | "local";
};

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
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      adminActor?: AdminActor;
    }
  }
}

export function isAdminRole(value: unknown): value is AdminRole {
  return value === "viewer" || value === "admin";
}

/**
 * How an actor appears in process logs: emails stay out of logs (the reconciliation log in the
 * database keeps the full name), so the local part is cut to its first character.
 */
export function actorForLog(name: string): string {
  const at = name.indexOf("@");
  return at > 0 ? `${name[0]}…${name.slice(at)}` : name;
}
