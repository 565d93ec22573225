import type { Profile } from "@node-saml/passport-saml";
import type { AdminRole } from "../../../admin/adminActor.js";

/** `attributes`: the SAML attribute names that may carry the role (Okta's `role`, Entra's role claim URI), any of them counting. */
export type RoleRules = { attributes: string[]; adminValues: string[]; viewerValues: string[] };

/** SAML_ROLE_ATTRIBUTE's comma-separated attribute names, case kept (attribute names are case-sensitive). */
export function parseRoleAttributes(list: string): string[] {
  return list
    .split(",")
    .map((v) => v.trim())
    .filter(Boolean);
}

export function parseRoleValues(list: string): string[] {
  return list
    .split(",")
    .map((v) => v.trim().toLowerCase())
    .filter(Boolean);
}

/** The role a SAML profile grants: admin wins over viewer; no match means no access. */
export function roleFromProfile(profile: Profile, rules: RoleRules): AdminRole | undefined {
  const values = rules.attributes
    .flatMap((attribute) => {
      const raw =
        (profile as Record<string, unknown>)[attribute] ??
        (profile.attributes as Record<string, unknown> | undefined)?.[attribute];
      return Array.isArray(raw) ? raw : [raw];
    })
    .filter((v): v is string => typeof v === "string")
    .map((v) => v.trim().toLowerCase());
  if (values.some((v) => rules.adminValues.includes(v))) return "admin";
  if (values.some((v) => rules.viewerValues.includes(v))) return "viewer";
  return undefined;
}
