import { randomUUID } from "node:crypto";
import type { CompanyDirectory, Registry, Workspace } from "./directory.js";
import { badRequest } from "../http.js";
import { isRecord } from "../../json.js";

/**
 * The directory part of `POST /_emulator/fixtures`: workspaces with their teams, roles and
 * permission sets, which the platform has no API to create or list. Each is created, or found by
 * its id or name when it exists (a role's or set's permissions are then replaced); an id absent
 * is generated as a UUID. An id that names something under another name, or a name held under
 * another id, is a 400 and nothing is loaded (renames go through `POST /_emulator/rename`).
 */

type Named = { name: string; id?: string };
type WorkspaceFixture = Named & { teams: Named[] };
type RoleFixture = Named & {
  workspaces: { appGroupName: string; appGroupPermissions: string[] }[];
  permissions: string[];
};
type PermissionSetFixture = Named & { permissions: string[] };
export type DirectoryFixtures = {
  workspaces?: WorkspaceFixture[];
  roles?: RoleFixture[];
  permissionSets?: PermissionSetFixture[];
};

const nonEmpty = (v: unknown): v is string => typeof v === "string" && v !== "";

function list(value: unknown, at: string): unknown[] {
  if (!Array.isArray(value)) throw badRequest(`${at} must be an array`);
  return value;
}

function permissionsOf(value: unknown, at: string): string[] {
  if (!Array.isArray(value) || !value.every(nonEmpty)) throw badRequest(`${at} must be an array of permission strings`);
  return value;
}

/** `{ <nameField>, <idField>? }`, and each name and id once per list. */
function named(
  entries: unknown[],
  at: string,
  nameField: string,
  idField: string,
): (Named & Record<string, unknown>)[] {
  const names = new Set<string>();
  const ids = new Set<string>();
  return entries.map((entry, i) => {
    if (!isRecord(entry) || !nonEmpty(entry[nameField])) throw badRequest(`${at}[${i}].${nameField} is required`);
    const id = entry[idField];
    if (id !== undefined && !nonEmpty(id)) throw badRequest(`${at}[${i}].${idField} must be a non-empty string`);
    if (names.has(entry[nameField]) || (id !== undefined && ids.has(id)))
      throw badRequest(`${at}[${i}]: each ${nameField} and ${idField} at most once`);
    names.add(entry[nameField]);
    if (id !== undefined) ids.add(id);
    return { ...entry, name: entry[nameField], ...(id === undefined ? {} : { id }) };
  });
}

/** Pure: the directory fields of a fixtures body; throws a 400 naming the first bad record. */
export function parseDirectoryFixtures(body: Record<string, unknown>): DirectoryFixtures {
  const out: DirectoryFixtures = {};
  if (body.workspaces !== undefined) {
    out.workspaces = named(list(body.workspaces, "workspaces"), "workspaces", "name", "id").map((w, i) => ({
      name: w.name,
      id: w.id,
      teams: named(list(w.teams ?? [], `workspaces[${i}].teams`), `workspaces[${i}].teams`, "name", "id").map(
        ({ name, id }) => ({ name, id }),
      ),
    }));
  }
  if (body.roles !== undefined) {
    out.roles = named(list(body.roles, "roles"), "roles", "roleName", "roleId").map((r, i) => ({
      name: r.name,
      id: r.id,
      permissions: permissionsOf(r.permissions ?? [], `roles[${i}].permissions`),
      workspaces: list(r.workspaces ?? [], `roles[${i}].workspaces`).map((w, j) => {
        const at = `roles[${i}].workspaces[${j}]`;
        if (!isRecord(w) || !nonEmpty(w.appGroupName)) throw badRequest(`${at}.appGroupName is required`);
        return {
          appGroupName: w.appGroupName,
          appGroupPermissions: permissionsOf(w.appGroupPermissions ?? [], `${at}.appGroupPermissions`),
        };
      }),
    }));
  }
  if (body.permissionSets !== undefined) {
    out.permissionSets = named(list(body.permissionSets, "permissionSets"), "permissionSets", "name", "id").map(
      (s, i) => ({
        name: s.name,
        id: s.id,
        permissions: permissionsOf(s.permissions, `permissionSets[${i}].permissions`),
      }),
    );
  }
  return out;
}

/** The problem with loading `item` into `registry`, if any. */
function clash<T extends { id: string; name: string }>(registry: Registry<T>, item: Named, what: string) {
  if (item.id === undefined) return undefined;
  const byId = registry.get(item.id);
  if (byId && byId.name !== item.name)
    return `${what} id "${item.id}" already names "${byId.name}" (renames go through POST /_emulator/rename)`;
  const byName = registry.named(item.name);
  if (!byId && byName) return `${what} "${item.name}" already exists with id "${byName.id}"`;
  return undefined;
}

function found<T extends { id: string; name: string }>(registry: Registry<T>, item: Named): T | undefined {
  return (item.id === undefined ? undefined : registry.get(item.id)) ?? registry.named(item.name);
}

function problems(directory: CompanyDirectory, fixtures: DirectoryFixtures): string[] {
  const out: string[] = [];
  const teamIds = new Set<string>();
  for (const ws of fixtures.workspaces ?? []) {
    const workspace = found(directory.workspaces, ws);
    out.push(clash(directory.workspaces, ws, "workspace") ?? "");
    for (const team of ws.teams) {
      if (workspace) out.push(clash(workspace.teams, team, `team of workspace "${ws.name}",`) ?? "");
      if (team.id === undefined) continue;
      const home = directory.homeOfTeam(team.id);
      if (home && home !== workspace) out.push(`team id "${team.id}" belongs to workspace "${home.name}"`);
      if (teamIds.has(team.id)) out.push(`team id "${team.id}" is given to two teams`);
      teamIds.add(team.id);
    }
  }
  for (const role of fixtures.roles ?? []) out.push(clash(directory.roles, role, "role") ?? "");
  for (const set of fixtures.permissionSets ?? [])
    out.push(clash(directory.permissionSets, set, "permission set") ?? "");
  return out.filter(Boolean);
}

/** Loads after checking everything against the directory; a clash is a 400 that loads nothing. */
export function loadDirectoryFixtures(directory: CompanyDirectory, fixtures: DirectoryFixtures): void {
  const [problem] = problems(directory, fixtures);
  if (problem) throw badRequest(problem);
  const workspaceNamed = (name: string, id?: string): Workspace =>
    found(directory.workspaces, { name, id }) ?? directory.addWorkspace(name, id);
  for (const ws of fixtures.workspaces ?? []) {
    const workspace = workspaceNamed(ws.name, ws.id);
    for (const team of ws.teams) found(workspace.teams, team) ?? directory.addTeam(workspace, team.name, team.id);
  }
  for (const set of fixtures.permissionSets ?? []) {
    const held = found(directory.permissionSets, set);
    if (held) held.permissions = [...set.permissions];
    else
      directory.permissionSets.add({ id: set.id ?? randomUUID(), name: set.name, permissions: [...set.permissions] });
  }
  for (const role of fixtures.roles ?? []) {
    const workspaces = role.workspaces.map((w) => ({
      workspaceId: workspaceNamed(w.appGroupName).id,
      permissions: [...w.appGroupPermissions],
    }));
    const held = found(directory.roles, role);
    if (held) Object.assign(held, { workspaces, permissions: [...role.permissions] });
    else
      directory.roles.add({
        id: role.id ?? randomUUID(),
        name: role.name,
        workspaces,
        permissions: [...role.permissions],
      });
  }
}
