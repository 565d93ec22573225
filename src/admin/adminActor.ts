/** Who is using the admin UI or API: every admin action is logged with who did it. */

import type { AdminRole } from "../policy.js";

export type { AdminRole };

export type AdminActor = {
  /** The SAML NameID (normally the email), or "local admin" for ADMIN_TOKEN sign-in. */
  name: string;
  role: AdminRole;
  via: "saml" | "local";
};

/**
 * How an actor appears in process logs: emails stay out of logs (the reconciliation log in the
 * database keeps the full name), so the local part is cut to its first character.
 */
export function actorForLog(name: string): string {
  const at = name.indexOf("@");
  return at > 0 ? `${name[0]}…${name.slice(at)}` : name;
}
