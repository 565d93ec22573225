import { inSameTerms, type Equivalents } from "../mapping/granular.js";
import type { DesiredDashboardUser, DesiredWorkspace } from "../mapping/types.js";

/**
 * The difference between two dashboard users, down to single permissions: what the log shows
 * admins as "old → new". Pure.
 */
export type Change =
  | { kind: "set"; path: string; old: string | null; new: string | null }
  | { kind: "permissions"; path: string; added: string[]; removed: string[] }
  | { kind: "account"; old: "absent" | "present"; new: "absent" | "present" };

export function diffDashboardUsers(before: DesiredDashboardUser | null, after: DesiredDashboardUser | null): Change[] {
  const changes: Change[] = [];
  if (!before !== !after)
    changes.push({ kind: "account", old: before ? "present" : "absent", new: after ? "present" : "absent" });
  const a = before ?? emptyUser();
  const b = after ?? emptyUser();
  for (const field of ["userName", "givenName", "familyName", "department"] as const) {
    if (a[field] !== b[field])
      changes.push({ kind: "set", path: field, old: before ? a[field] : null, new: after ? b[field] : null });
  }
  pushSetDiff(changes, "companyPermissions", a.companyPermissions, b.companyPermissions);
  pushSetDiff(changes, "roles", a.roles ?? [], b.roles ?? []);
  const names = [...new Set([...a.workspaces, ...b.workspaces].map((w) => w.appGroupName))].sort();
  for (const name of names) {
    const wa = a.workspaces.find((w) => w.appGroupName === name) ?? emptyWorkspace(name);
    const wb = b.workspaces.find((w) => w.appGroupName === name) ?? emptyWorkspace(name);
    const base = `workspaces[${name}]`;
    pushSetDiff(changes, `${base}.permissions`, wa.appGroupPermissions, wb.appGroupPermissions);
    pushSetDiff(changes, `${base}.permissionSets`, wa.appGroupPermissionSets, wb.appGroupPermissionSets);
    const teams = [...new Set([...wa.team, ...wb.team].map((t) => t.teamName))].sort();
    for (const team of teams) {
      const ta = wa.team.find((t) => t.teamName === team)?.teamPermissions ?? [];
      const tb = wb.team.find((t) => t.teamName === team)?.teamPermissions ?? [];
      pushSetDiff(changes, `${base}.teams[${team}].permissions`, ta, tb);
    }
  }
  return changes;
}

/**
 * The difference between two states that may be in different permission models (a legacy state
 * applied before, a granular one answered or wanted now): compared in granular terms, so the same
 * access in both models is no change.
 */
export function diffInSameTerms(
  before: DesiredDashboardUser | null,
  after: DesiredDashboardUser | null,
  equivalents: Equivalents,
): Change[] {
  const terms = inSameTerms(before, after, equivalents);
  return diffDashboardUsers(terms.before, terms.after);
}

/** True when the change takes something away (a permission, a workspace, a team, the account). */
export function isReduction(changes: readonly Change[]): boolean {
  return changes.some(
    (c) => (c.kind === "permissions" && c.removed.length > 0) || (c.kind === "account" && c.new === "absent"),
  );
}

function pushSetDiff(changes: Change[], path: string, before: readonly string[], after: readonly string[]): void {
  const added = after.filter((p) => !before.includes(p));
  const removed = before.filter((p) => !after.includes(p));
  if (added.length || removed.length) changes.push({ kind: "permissions", path, added, removed });
}

function emptyUser(): DesiredDashboardUser {
  return { userName: "", givenName: "", familyName: "", department: "", companyPermissions: [], workspaces: [] };
}

function emptyWorkspace(appGroupName: string): DesiredWorkspace {
  return { appGroupName, appGroupPermissions: [], appGroupPermissionSets: [], team: [] };
}

/** One line per change, for the CLI and the UI's plain-text views. */
export function describeChange(change: Change): string {
  switch (change.kind) {
    case "account":
      return `account: ${change.old} → ${change.new}`;
    case "set":
      return `${change.path}: ${JSON.stringify(change.old)} → ${JSON.stringify(change.new)}`;
    case "permissions": {
      const parts = [...change.added.map((p) => `+${p}`), ...change.removed.map((p) => `-${p}`)];
      return `${change.path}: ${parts.join(" ")}`;
    }
  }
}
