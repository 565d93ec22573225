import { grantKey, grantsOf, type Grant } from "./reasons.js";
import type { DesiredDashboardUser } from "./types.js";

/**
 * Local denies (a "revoke" in an access campaign): the connector cannot remove the IdP group
 * membership, so it removes the grant from the desired dashboard user instead, for as long as the
 * deny is active. Pure: the reconciler's desired state and the resync's planning both call it.
 */

/**
 * The grant a deny removes: one string, role or permission set (never the department: it grants
 * no access on its own). A revoked bundle is one deny per string (each ends on its own when the IdP
 * stops granting it); `partOf` then names the bundle (its `permission`, `bundleLabel`).
 */
export type DeniedGrant = Omit<Grant, "bundle"> & {
  scope: "company" | "role" | "workspace" | "permissionSet" | "team";
  partOf?: string | null;
};

/**
 * The desired user without the denied grants, and the denies the mapping no longer grants (they
 * end: the IdP stopped granting it, which is what the revoke asked the IdP admin to do).
 */
export function applyDenies<D extends DeniedGrant>(
  desired: DesiredDashboardUser | null,
  denies: readonly D[],
): { desired: DesiredDashboardUser | null; notGranted: D[] } {
  if (!denies.length) return { desired, notGranted: [] };
  const granted = new Set(desired ? grantsOf(desired).map(grantKey) : []);
  const notGranted = denies.filter((d) => !granted.has(grantKey(d)));
  if (!desired || notGranted.length === denies.length) return { desired, notGranted };
  const denied = new Set(denies.map(grantKey));
  const keeps = (g: Grant) => !denied.has(grantKey(g));
  const workspaces = desired.workspaces
    .map((ws) => {
      const workspace = ws.appGroupName;
      return {
        ...ws,
        appGroupPermissions: ws.appGroupPermissions.filter((permission) =>
          keeps({ scope: "workspace", workspace, team: null, permission }),
        ),
        appGroupPermissionSets: ws.appGroupPermissionSets.filter((permission) =>
          keeps({ scope: "permissionSet", workspace, team: null, permission }),
        ),
        team: ws.team
          .map((t) => ({
            ...t,
            teamPermissions: t.teamPermissions.filter((permission) =>
              keeps({ scope: "team", workspace, team: t.teamName, permission }),
            ),
          }))
          .filter((t) => t.teamPermissions.length > 0),
      };
    })
    .filter((ws) => ws.appGroupPermissions.length + ws.appGroupPermissionSets.length + ws.team.length > 0);
  const companyPermissions = desired.companyPermissions.filter((permission) =>
    keeps({ scope: "company", workspace: null, team: null, permission }),
  );
  const { roles: mapped, ...rest } = desired;
  // A user with no role carries no `roles` (src/mapping/desired.ts): equal states stay deep-equal.
  const roles = (mapped ?? []).filter((permission) =>
    keeps({ scope: "role", workspace: null, team: null, permission }),
  );
  return { desired: { ...rest, companyPermissions, ...(roles.length ? { roles } : {}), workspaces }, notGranted };
}
