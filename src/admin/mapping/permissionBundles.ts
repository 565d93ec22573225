import { bundleOrigin, type Grant } from "../../mapping/reasons.js";

/**
 * A granular bundle as the admin pages' diffs show it: the strings one rule gives in one workspace
 * or team (`bundleGrants` in src/mapping/reasons.ts, as the reviews show them), named by where they
 * come from. `list`: the path of their array in a PermissionTree, as the diff writes it.
 */
export type PermissionBundle = { list: string; label: string; strings: string[] };

/** The bundles among a state's explained grants (a legacy state's, one grant per string, has none). */
export function permissionBundles(grants: readonly Grant[]): PermissionBundle[] {
  return grants.flatMap((g) => {
    if (!g.bundle || g.workspace === null) return [];
    const list =
      g.scope === "team" ? `workspaces.${g.workspace}.teams.${g.team}` : `workspaces.${g.workspace}.permissions`;
    return [{ list, label: bundleOrigin(g.permission), strings: [...g.bundle] }];
  });
}
