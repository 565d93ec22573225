import type { DesiredDashboardUser } from "../../mapping/types.js";
import type { Change } from "../../reconcile/diff.js";

/**
 * A dashboard user as admins read it: workspaces and teams keyed by name (not array position),
 * so the UI's diff says `workspaces.EU Production.teams.Lifecycle[basic_access]`. Pure.
 */
export type PermissionTree = {
  userName: string;
  givenName: string;
  familyName: string;
  department: string;
  companyPermissions: string[];
  workspaces: Record<string, { permissions: string[]; permissionSets: string[]; teams: Record<string, string[]> }>;
};

export function permissionTree(user: DesiredDashboardUser | null | undefined): PermissionTree | null {
  if (!user) return null;
  return {
    userName: user.userName,
    givenName: user.givenName,
    familyName: user.familyName,
    department: user.department,
    companyPermissions: [...user.companyPermissions],
    workspaces: Object.fromEntries(
      user.workspaces.map((w) => [
        w.appGroupName,
        {
          permissions: [...w.appGroupPermissions],
          permissionSets: [...w.appGroupPermissionSets],
          teams: Object.fromEntries(w.team.map((t) => [t.teamName, [...t.teamPermissions]])),
        },
      ]),
    ),
  };
}

const TEAM_PATH = /^workspaces\[(.+)\]\.teams\[(.+)\]\.permissions$/;
const WORKSPACE_PATH = /^workspaces\[(.+)\]\.(permissions|permissionSets)$/;

/**
 * What a decision was going to apply when the log kept no `after` (it keeps one only on success):
 * `before` with the logged changes applied. Null when the change removes the account.
 */
export function treeAfterChanges(before: PermissionTree | null, changes: readonly Change[]): PermissionTree | null {
  if (changes.some((c) => c.kind === "account" && c.new === "absent")) return null;
  const tree: PermissionTree = structuredClone(before) ?? {
    userName: "",
    givenName: "",
    familyName: "",
    department: "",
    companyPermissions: [],
    workspaces: {},
  };
  for (const change of changes) {
    if (change.kind === "set") (tree as Record<string, unknown>)[change.path] = change.new ?? "";
    if (change.kind !== "permissions") continue;
    const apply = (list: string[]) => [...list.filter((p) => !change.removed.includes(p)), ...change.added].sort();
    const team = TEAM_PATH.exec(change.path);
    const workspace = WORKSPACE_PATH.exec(change.path);
    if (change.path === "companyPermissions") tree.companyPermissions = apply(tree.companyPermissions);
    else if (team) {
      const ws = workspaceOf(tree, team[1]!);
      ws.teams[team[2]!] = apply(ws.teams[team[2]!] ?? []);
    } else if (workspace) {
      const ws = workspaceOf(tree, workspace[1]!);
      const key = workspace[2] as "permissions" | "permissionSets";
      ws[key] = apply(ws[key]);
    }
  }
  return pruned(tree);
}

/** Teams and workspaces left with nothing are gone, as they are from a desired user. */
function pruned(tree: PermissionTree): PermissionTree {
  for (const [name, ws] of Object.entries(tree.workspaces)) {
    for (const [team, perms] of Object.entries(ws.teams)) if (!perms.length) delete ws.teams[team];
    if (!ws.permissions.length && !ws.permissionSets.length && !Object.keys(ws.teams).length)
      delete tree.workspaces[name];
  }
  return tree;
}

function workspaceOf(tree: PermissionTree, name: string): PermissionTree["workspaces"][string] {
  return (tree.workspaces[name] ??= { permissions: [], permissionSets: [], teams: {} });
}

/**
 * The old → new pair a log entry shows: the stored `after` when the decision succeeded (null for
 * a deprovision), otherwise what it was trying to apply.
 */
export function logEntryTrees(entry: {
  before: DesiredDashboardUser | null;
  after: DesiredDashboardUser | null;
  changes: readonly Change[];
}): { before: PermissionTree | null; after: PermissionTree | null } {
  const before = permissionTree(entry.before);
  if (entry.after) return { before, after: permissionTree(entry.after) };
  if (!entry.changes.length) return { before, after: before };
  return { before, after: treeAfterChanges(before, entry.changes) };
}
