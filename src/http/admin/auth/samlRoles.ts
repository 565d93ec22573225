import type { Profile } from "@node-saml/passport-saml";
import type { AdminRole } from "../../../admin/actor.js";

export type RoleRules = { attribute: string; adminValues: string[]; viewerValues: string[] };

export function parseRoleValues(list: string): string[] {
  return list
    .split(",")
    .map((v) => v.trim().toLowerCase())
    .filter(Boolean);
}

/** The role a SAML profile grants: admin wins over viewer; no match means no access. */
export function roleFromProfile(profile: Profile, rules: RoleRules): AdminRole | undefined {
  const raw =
    (profile as Record<string, unknown>)[rules.attribute] ??
    (profile.attributes as Record<string, unknown> | undefined)?.[rules.attribute];
  const values = (Array.isArray(raw) ? raw : [raw])
    .filter((v): v is string => typeof v === "string")
    .map((v) => v.trim().toLowerCase());
  if (values.some((v) => rules.adminValues.includes(v))) return "admin";
  if (values.some((v) => rules.viewerValues.includes(v))) return "viewer";
  return undefined;
}
