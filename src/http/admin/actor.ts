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
