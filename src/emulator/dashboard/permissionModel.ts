import { isLegacyOnly, LEGACY_TO_GRANULAR, type GranularEquivalent } from "../../vocabulary/permissions.js";

/**
 * The emulated company's permission model (shared/platform-granular.md): legacy, or granular
 * with legacy SCIM strings still accepted or already refused, and the translation from one to the
 * other. The facts come from src/vocabulary/permissions.ts; what the platform does not publish (SCIM
 * strings for permissions it names by display name only) the emulator makes up here.
 */

export const PERMISSIONS_OPTIONS = ["legacy", "granular", "granular-strict"] as const;
/** `granular`: granular, legacy strings accepted; `granular-strict`: granular, legacy strings refused. */
export type PermissionsOption = (typeof PERMISSIONS_OPTIONS)[number];

/** Where the company stands. A legacy company accepts legacy strings by definition. */
export type PermissionModel = { model: "legacy" | "granular"; legacy: "accepted" | "refused" };

export function permissionModelOf(option: PermissionsOption): PermissionModel {
  if (option === "legacy") return { model: "legacy", legacy: "accepted" };
  return { model: "granular", legacy: option === "granular" ? "accepted" : "refused" };
}

/** The emulator's SCIM string for a permission published by display name only: "Approve Campaigns" → approve_campaigns. */
export function inventedScimString(display: string): string {
  return display
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "");
}

const scimStringOf = (equivalent: GranularEquivalent): string =>
  "scim" in equivalent ? equivalent.scim : inventedScimString(equivalent.display);

/** Strings the emulator invented; part of its granular vocabulary (export_user_data is one, spelled like the legacy string). */
const INVENTED_SCIM_STRINGS: ReadonlySet<string> = new Set(
  Object.values(LEGACY_TO_GRANULAR).flatMap((equivalents) =>
    (equivalents ?? []).flatMap((e) => ("display" in e ? [inventedScimString(e.display)] : [])),
  ),
);

/** A string a granular company reads as legacy: legacy-only per the published lists, and not one the emulator invented. */
export function isLegacyInGranular(permission: string): boolean {
  return isLegacyOnly(permission) && !INVENTED_SCIM_STRINGS.has(permission);
}

/** Permissions after translation, and the legacy strings dropped for want of a published equivalent. */
export type Translation = { permissions: string[]; dropped: string[] };

/**
 * Replaces each string `isLegacy` picks by its granular equivalents, first appearance kept and
 * duplicates removed; a list with nothing to replace is returned as it is.
 */
function translate(permissions: readonly string[], isLegacy: (permission: string) => boolean): Translation {
  if (!permissions.some(isLegacy)) return { permissions: [...permissions], dropped: [] };
  const kept = new Set<string>();
  const dropped: string[] = [];
  for (const permission of permissions) {
    if (!isLegacy(permission)) {
      kept.add(permission);
      continue;
    }
    const equivalents = LEGACY_TO_GRANULAR[permission];
    if (equivalents) for (const e of equivalents) kept.add(scimStringOf(e));
    else dropped.push(permission);
  }
  return { permissions: [...kept], dropped };
}

const isPublishedLegacy = (permission: string): boolean => Object.hasOwn(LEGACY_TO_GRANULAR, permission);

/**
 * The migration of a legacy company: every string of the published table, the ones spelled
 * alike in both models included (`edit_segments` becomes "Archive Segments"), becomes its
 * granular equivalents. Strings outside the table are not legacy strings and stay.
 */
export function migratedPermissions(permissions: readonly string[]): Translation {
  return translate(permissions, isPublishedLegacy);
}

/**
 * A write to a granular company that still accepts legacy strings: only legacy-only strings are
 * translated; one spelled alike in both models is read as the granular string it also is.
 */
export function acceptedLegacyPermissions(permissions: readonly string[]): Translation {
  return translate(permissions, isLegacyInGranular);
}
