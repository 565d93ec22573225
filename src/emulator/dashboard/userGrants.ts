import { randomUUID } from "node:crypto";
import { describeRef, type DashboardUserInput, type DirectoryRef, type WorkspaceInput } from "./userInput.js";
import type { CompanyDirectory, PermissionSet, Role, Workspace } from "./directory.js";
import { scimError } from "../http.js";
import { acceptedLegacyPermissions, isLegacyInGranular, type PermissionModel } from "./permissionModel.js";

/**
 * What a dashboard user holds, by API identifier (so a rename shows everywhere), and its two
 * presentations: the legacy answer the emulator has always given, and the granular one with
 * roles, identifiers and permission-set identifiers.
 */

type TeamGrant = { teamId: string; permissions: string[] };
type WorkspaceGrant = {
  workspaceId: string;
  permissions: string[];
  permissionSetIds: string[];
  teams: TeamGrant[];
};
export type Grants = { companyPermissions: string[]; roleIds: string[]; workspaces: WorkspaceGrant[] };

type PresentedTeam = { teamId: string; teamName: string; teamPermissions: string[] };
type PresentedWorkspace = {
  appGroupId: string;
  appGroupName: string;
  appGroupPermissions: string[];
  appGroupPermissionSets: { appGroupPermissionSetName: string; appGroupPermissionSetId?: string }[];
  team: PresentedTeam[];
};
export type PresentedPermissions = {
  companyPermissions: string[];
  roles?: { roleName: string; roleId: string }[];
  appGroup: PresentedWorkspace[];
};

const invalid = (detail: string) => scimError(400, detail, undefined, "invalidValue");

/**
 * The grants a write asks for, checked against the directory under the model; throws a SCIM 400
 * naming the first problem. Workspaces and teams named for the first time are created, and in the
 * legacy model permission sets too, only once every check has passed.
 */
export function resolveGrants(input: DashboardUserInput, directory: CompanyDirectory, model: PermissionModel): Grants {
  if (model.model === "granular") checkGranularWrite(input, directory, model);
  const permissionsOf = (given: string[]) =>
    model.model === "granular" ? acceptedLegacyPermissions(given).permissions : [...given];
  return {
    companyPermissions: [...input.companyPermissions],
    roleIds: input.roles.map((ref) => findRole(directory, ref)!.id),
    workspaces: input.appGroup.map((ws) => {
      const workspace = findWorkspace(directory, ws.workspace) ?? directory.addWorkspace(nameOf(ws.workspace));
      return {
        workspaceId: workspace.id,
        permissions: permissionsOf(ws.appGroupPermissions),
        permissionSetIds: ws.appGroupPermissionSets.map((ref) => ensurePermissionSet(directory, ref).id),
        teams: ws.team.map((t) => ({
          teamId: (findTeam(workspace, t.team) ?? directory.addTeam(workspace, nameOf(t.team))).id,
          permissions: permissionsOf(t.teamPermissions),
        })),
      };
    }),
  };
}

function checkGranularWrite(input: DashboardUserInput, directory: CompanyDirectory, model: PermissionModel): void {
  input.roles.forEach((ref, i) => {
    if (!findRole(directory, ref)) throw invalid(`permissions.roles[${i}]: no role with ${describeRef("role", ref)}`);
  });
  input.appGroup.forEach((ws, i) => checkGranularWorkspace(ws, `permissions.appGroup[${i}]`, directory, model));
}

function checkGranularWorkspace(
  ws: WorkspaceInput,
  at: string,
  directory: CompanyDirectory,
  model: PermissionModel,
): void {
  const workspace = findWorkspace(directory, ws.workspace);
  if (!workspace && "id" in ws.workspace)
    throw invalid(`${at}: no workspace with ${describeRef("workspace", ws.workspace)}`);
  const where = `appGroup "${workspace?.name ?? nameOf(ws.workspace)}"`;
  if (ws.appGroupPermissionSets.length > 1) throw invalid(`${at} (${where}): at most one permission set per workspace`);
  if (ws.appGroupPermissionSets.length === 1 && ws.appGroupPermissions.length > 0)
    throw invalid(`${at} (${where}): give permissions or a permission set for a workspace, not both`);
  ws.appGroupPermissionSets.forEach((ref, k) => {
    if (!findPermissionSet(directory, ref))
      throw invalid(`${at}.appGroupPermissionSets[${k}]: no permission set with ${describeRef("permissionSet", ref)}`);
  });
  refuseLegacy(ws.appGroupPermissions, where, model);
  ws.team.forEach((t, j) => {
    const team = workspace && findTeam(workspace, t.team);
    if (!team && "id" in t.team)
      throw invalid(`${at}.team[${j}]: no team with ${describeRef("team", t.team)} in ${where}`);
    refuseLegacy(t.teamPermissions, `${where}, team "${team?.name ?? nameOf(t.team)}"`, model);
  });
}

/** With legacy strings refused, the first one is a 400 naming it and where it was given (the wording is the emulator's). */
function refuseLegacy(permissions: string[], where: string, model: PermissionModel): void {
  if (model.legacy !== "refused") return;
  const legacy = permissions.find(isLegacyInGranular);
  if (legacy !== undefined)
    throw invalid(`Legacy permission "${legacy}" is no longer accepted: use granular permissions (${where})`);
}

const nameOf = (ref: DirectoryRef): string => ("name" in ref ? ref.name : ref.id);

function findWorkspace(directory: CompanyDirectory, ref: DirectoryRef): Workspace | undefined {
  return "id" in ref ? directory.workspaces.get(ref.id) : directory.workspaces.named(ref.name);
}

function findTeam(workspace: Workspace, ref: DirectoryRef) {
  return "id" in ref ? workspace.teams.get(ref.id) : workspace.teams.named(ref.name);
}

function findRole(directory: CompanyDirectory, ref: DirectoryRef): Role | undefined {
  return "id" in ref ? directory.roles.get(ref.id) : directory.roles.named(ref.name);
}

function findPermissionSet(directory: CompanyDirectory, ref: DirectoryRef): PermissionSet | undefined {
  return "id" in ref ? directory.permissionSets.get(ref.id) : directory.permissionSets.named(ref.name);
}

/** The legacy model echoes any set name it is given; it becomes a set (with no permissions) of the directory. */
function ensurePermissionSet(directory: CompanyDirectory, ref: DirectoryRef): PermissionSet {
  return (
    findPermissionSet(directory, ref) ??
    directory.permissionSets.add({ id: randomUUID(), name: nameOf(ref), permissions: [] })
  );
}

/** The permissions object of an answer, in the model's shape and with every name as it is now. */
export function presentPermissions(
  grants: Grants,
  directory: CompanyDirectory,
  model: PermissionModel,
): PresentedPermissions {
  const granular = model.model === "granular";
  const appGroup = grants.workspaces.map((grant): PresentedWorkspace => {
    const workspace = directory.workspaces.get(grant.workspaceId)!;
    const team = grant.teams.map((t) => {
      const held = workspace.teams.get(t.teamId)!;
      return { teamId: granular ? held.id : held.legacyId, teamName: held.name, teamPermissions: [...t.permissions] };
    });
    const sets = grant.permissionSetIds.map((id) => directory.permissionSets.get(id)!);
    const common = { appGroupName: workspace.name, appGroupPermissions: [...grant.permissions] };
    // Key order as each model's documentation shows it; the legacy one is unchanged from before.
    return granular
      ? {
          appGroupId: workspace.id,
          ...common,
          appGroupPermissionSets: sets.map((s) => ({
            appGroupPermissionSetName: s.name,
            appGroupPermissionSetId: s.id,
          })),
          team,
        }
      : {
          appGroupId: workspace.legacyId,
          ...common,
          team,
          appGroupPermissionSets: sets.map((s) => ({ appGroupPermissionSetName: s.name })),
        };
  });
  if (!granular) return { companyPermissions: [...grants.companyPermissions], appGroup };
  return {
    companyPermissions: [...grants.companyPermissions],
    roles: grants.roleIds.map((id) => ({ roleName: directory.roles.get(id)!.name, roleId: id })),
    appGroup,
  };
}
