import type { DesiredDashboardUser, DesiredTeam, DesiredWorkspace } from "../mapping/types.js";
import type { Change } from "./diff.js";

/**
 * Access changed on the platform behind the connector's back (docs/platform-record.md): what an
 * account holds beyond what the mapping grants (`granted`) and what the mapping grants that it no
 * longer holds (`withdrawn`), in the dashboard user's own shape. Pure.
 */
export type AccessSet = Pick<DesiredDashboardUser, "companyPermissions" | "roles" | "workspaces">;
export type OutsideAccess = { granted: AccessSet; withdrawn: AccessSet };

const EMPTY: AccessSet = { companyPermissions: [], roles: [], workspaces: [] };
const sorted = (values: Iterable<string>) => [...new Set(values)].sort();
const minus = (a: readonly string[], b: readonly string[]) => a.filter((v) => !b.includes(v));

/** What `a` holds that `b` does not, down to single permissions. */
function accessBeyond(a: AccessSet, b: AccessSet): AccessSet {
  const workspaces: DesiredWorkspace[] = [];
  for (const wa of a.workspaces) {
    const wb = b.workspaces.find((w) => w.appGroupName === wa.appGroupName);
    const team: DesiredTeam[] = wa.team
      .map((ta) => ({
        teamName: ta.teamName,
        teamPermissions: minus(
          ta.teamPermissions,
          wb?.team.find((t) => t.teamName === ta.teamName)?.teamPermissions ?? [],
        ),
      }))
      .filter((t) => t.teamPermissions.length);
    const beyond = {
      appGroupName: wa.appGroupName,
      appGroupPermissions: minus(wa.appGroupPermissions, wb?.appGroupPermissions ?? []),
      appGroupPermissionSets: minus(wa.appGroupPermissionSets, wb?.appGroupPermissionSets ?? []),
      team,
    };
    if (!wb || beyond.appGroupPermissions.length || beyond.appGroupPermissionSets.length || team.length)
      workspaces.push(beyond);
  }
  return {
    companyPermissions: minus(a.companyPermissions, b.companyPermissions),
    roles: minus(a.roles ?? [], b.roles ?? []),
    workspaces,
  };
}

export function isEmptyAccess(set: AccessSet): boolean {
  return !set.companyPermissions.length && !(set.roles ?? []).length && !set.workspaces.length;
}

/** What the account holds beyond the mapping's grants and what it lacks of them. */
export function outsideAccess(desired: AccessSet | null, observed: AccessSet): OutsideAccess {
  const wanted = desired ?? EMPTY;
  return { granted: accessBeyond(observed, wanted), withdrawn: accessBeyond(wanted, observed) };
}

/**
 * The desired user with a kept outside change applied (PLATFORM_OUTSIDE_CHANGES=report): what was
 * granted in the dashboard is added, what was taken away there is left out, so the planner, which
 * compares this with what was last applied (the account as read), plans no write to undo it.
 */
export function withOutsideAccess(desired: DesiredDashboardUser, outside: OutsideAccess): DesiredDashboardUser {
  const kept = accessBeyond(desired, outside.withdrawn);
  const names = sorted([...kept.workspaces, ...outside.granted.workspaces].map((w) => w.appGroupName));
  const workspaces = names.map((name) => {
    const k = kept.workspaces.find((w) => w.appGroupName === name);
    const g = outside.granted.workspaces.find((w) => w.appGroupName === name);
    const teams = sorted([...(k?.team ?? []), ...(g?.team ?? [])].map((t) => t.teamName));
    return {
      appGroupName: name,
      appGroupPermissions: sorted([...(k?.appGroupPermissions ?? []), ...(g?.appGroupPermissions ?? [])]),
      appGroupPermissionSets: sorted([...(k?.appGroupPermissionSets ?? []), ...(g?.appGroupPermissionSets ?? [])]),
      team: teams.map((teamName) => ({
        teamName,
        teamPermissions: sorted(
          [...(k?.team ?? []), ...(g?.team ?? [])]
            .filter((t) => t.teamName === teamName)
            .flatMap((t) => t.teamPermissions),
        ),
      })),
    };
  });
  const roles = sorted([...(kept.roles ?? []), ...(outside.granted.roles ?? [])]);
  return {
    ...desired,
    companyPermissions: sorted([...kept.companyPermissions, ...outside.granted.companyPermissions]),
    ...(roles.length || desired.roles ? { roles } : {}),
    workspaces,
  };
}

/** The permissions of a set in words: "export_user_data", "EU Production: view_segments", "role Auditor". */
export function accessWords(set: AccessSet): string[] {
  const words = [...set.companyPermissions, ...(set.roles ?? []).map((r) => `role ${r}`)];
  for (const w of set.workspaces) {
    const held = [
      ...w.appGroupPermissions,
      ...w.appGroupPermissionSets.map((s) => `permission set ${s}`),
      ...w.team.flatMap((t) => t.teamPermissions.map((p) => `team ${t.teamName}: ${p}`)),
    ];
    words.push(...(held.length ? held.map((p) => `${w.appGroupName}: ${p}`) : [w.appGroupName]));
  }
  return words;
}

/**
 * What putting the last applied state back undoes, from the drift (last applied → observed):
 * "removed again: export_user_data, view_segments; put back: view_campaigns".
 */
export function undoWords(changes: readonly Change[]): string {
  const permission = (path: string, p: string) => (path === "companyPermissions" ? p : `${scope(path)}: ${p}`);
  const removed = changes.flatMap((c) => (c.kind === "permissions" ? c.added.map((p) => permission(c.path, p)) : []));
  const restored = changes.flatMap((c) =>
    c.kind === "permissions" ? c.removed.map((p) => permission(c.path, p)) : [],
  );
  const fields = changes.flatMap((c) => (c.kind === "set" ? [c.path] : []));
  const parts = [
    removed.length ? `removed again: ${removed.join(", ")}` : "",
    restored.length ? `put back: ${restored.join(", ")}` : "",
    fields.length ? `set back: ${fields.join(", ")}` : "",
  ].filter(Boolean);
  return parts.join("; ") || "nothing to undo";
}

/** "workspaces[EU Production].teams[Fashion].permissions" → "EU Production, team Fashion". */
function scope(path: string): string {
  if (path === "roles") return "role";
  const workspace = /^workspaces\[(.+?)\]/.exec(path)?.[1];
  const team = /\.teams\[(.+?)\]/.exec(path)?.[1];
  const set = path.endsWith(".permissionSets") ? " permission set" : "";
  return `${workspace ?? path}${team ? `, team ${team}` : ""}${set}`;
}

/** One grant (a string, role or set; a team's string) as the campaigns name it. */
export type OneGrant = { scope: string; workspace: string | null; team: string | null; permission: string };

/**
 * The set without one grant (a campaign revoked it: src/review/campaigns/origins.ts); a workspace
 * or team left with nothing is dropped.
 */
export function withoutGrant(set: AccessSet, g: OneGrant): AccessSet {
  const drop = (values: readonly string[], when: boolean) =>
    when ? values.filter((v) => v !== g.permission) : [...values];
  const workspaces = set.workspaces
    .map((w) => {
      const here = w.appGroupName === g.workspace;
      return {
        ...w,
        appGroupPermissions: drop(w.appGroupPermissions, here && g.scope === "workspace"),
        appGroupPermissionSets: drop(w.appGroupPermissionSets, here && g.scope === "permissionSet"),
        team: w.team
          .map((t) => ({
            ...t,
            teamPermissions: drop(t.teamPermissions, here && g.scope === "team" && t.teamName === g.team),
          }))
          .filter((t) => t.teamPermissions.length),
      };
    })
    .filter((w) => w.appGroupPermissions.length || w.appGroupPermissionSets.length || w.team.length);
  return {
    companyPermissions: drop(set.companyPermissions, g.scope === "company"),
    roles: drop(set.roles ?? [], g.scope === "role"),
    workspaces,
  };
}
