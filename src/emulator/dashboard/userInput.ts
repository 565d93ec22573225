import type { PermissionModel } from "./permissionModel.js";
import { isRecord } from "../../json.js";

/**
 * Parsing of the dashboard-user resource POST and PUT send (pure; the first problem becomes the
 * SCIM `detail`). The legacy model names workspaces, teams and permission sets by name and
 * ignores ids and roles, as the emulator always has; the granular model takes a name or an API
 * identifier for each, and company-level roles.
 */

export const SCIM_USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";

/** Something of the company's directory, named by API identifier or by name. */
export type DirectoryRef = { id: string } | { name: string };
type TeamInput = { team: DirectoryRef; teamPermissions: string[] };
export type WorkspaceInput = {
  workspace: DirectoryRef;
  appGroupPermissions: string[];
  appGroupPermissionSets: DirectoryRef[];
  team: TeamInput[];
};
export type DashboardUserInput = {
  userName: string;
  name: { givenName: string; familyName: string };
  department: string;
  companyPermissions: string[];
  roles: DirectoryRef[];
  appGroup: WorkspaceInput[];
};

export type ParseResult = { ok: true; value: DashboardUserInput } | { ok: false; detail: string };

const isStringArray = (v: unknown): v is string[] =>
  Array.isArray(v) && v.every((s) => typeof s === "string" && s.length > 0);
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

type Model = PermissionModel["model"];

/** Pure: the complete resource POST and PUT need (`schemas`, `userName`, `name`, `department`, `permissions`). */
export function parseDashboardUser(body: unknown, model: Model = "legacy"): ParseResult {
  const fail = (detail: string): ParseResult => ({ ok: false, detail });
  if (!isRecord(body)) return fail("Request body must be a JSON object");
  if (!isStringArray(body.schemas) || !body.schemas.includes(SCIM_USER_SCHEMA))
    return fail(`schemas must contain ${SCIM_USER_SCHEMA}`);
  if (typeof body.userName !== "string" || !EMAIL.test(body.userName))
    return fail("userName is required and must be an email address");
  const name = body.name;
  if (!isRecord(name) || typeof name.givenName !== "string" || typeof name.familyName !== "string") {
    return fail("name is required with givenName and familyName strings");
  }
  if (typeof body.department !== "string" || body.department.trim() === "")
    return fail("department is required and must be a non-empty string");
  const permissions = body.permissions;
  if (!isRecord(permissions)) return fail("permissions is required and must be an object");
  const companyPermissions = permissions.companyPermissions ?? [];
  if (!isStringArray(companyPermissions)) return fail("permissions.companyPermissions must be an array of strings");
  const roles = model === "granular" ? parseRefs(permissions.roles ?? [], "permissions.roles", "role", model) : [];
  if (typeof roles === "string") return fail(roles);
  const rawWorkspaces = permissions.appGroup ?? [];
  if (!Array.isArray(rawWorkspaces)) return fail("permissions.appGroup must be an array");
  const appGroup: WorkspaceInput[] = [];
  for (const [i, ws] of rawWorkspaces.entries()) {
    const parsed = parseWorkspace(ws, `permissions.appGroup[${i}]`, model);
    if (typeof parsed === "string") return fail(parsed);
    appGroup.push(parsed);
  }
  return {
    ok: true,
    value: {
      userName: body.userName,
      name: { givenName: name.givenName, familyName: name.familyName },
      department: body.department,
      companyPermissions,
      roles,
      appGroup,
    },
  };
}

/** The wire's field names for each kind's name and identifier. */
const FIELDS = {
  workspace: ["appGroupName", "appGroupId"],
  team: ["teamName", "teamId"],
  role: ["roleName", "roleId"],
  permissionSet: ["appGroupPermissionSetName", "appGroupPermissionSetId"],
} as const;

/** `{ <kind>Id }` or `{ <kind>Name }` (the identifier wins when both are sent); the legacy model reads the name only. */
function refOf(entry: Record<string, unknown>, kind: keyof typeof FIELDS, model: Model): DirectoryRef | undefined {
  const [nameField, idField] = FIELDS[kind];
  const id = entry[idField];
  if (model === "granular" && typeof id === "string" && id !== "") return { id };
  const name = entry[nameField];
  return typeof name === "string" && name !== "" ? { name } : undefined;
}

/** How a reference reads in an error detail: `appGroupId "…"` or `appGroupName "…"`. */
export function describeRef(kind: keyof typeof FIELDS, ref: DirectoryRef): string {
  const [nameField, idField] = FIELDS[kind];
  return "id" in ref ? `${idField} "${ref.id}"` : `${nameField} "${ref.name}"`;
}

function required(kind: keyof typeof FIELDS, model: Model): string {
  const [nameField, idField] = FIELDS[kind];
  return model === "granular" ? `${nameField} or ${idField}` : nameField;
}

function parseRefs(value: unknown, at: string, kind: "role" | "permissionSet", model: Model): DirectoryRef[] | string {
  const refs = Array.isArray(value) ? value.map((v) => (isRecord(v) ? refOf(v, kind, model) : undefined)) : [undefined];
  if (refs.some((r) => r === undefined)) return `${at} must be objects with ${required(kind, model)}`;
  return refs as DirectoryRef[];
}

function parseWorkspace(ws: unknown, at: string, model: Model): WorkspaceInput | string {
  const workspace = isRecord(ws) ? refOf(ws, "workspace", model) : undefined;
  if (!isRecord(ws) || !workspace) return `${at}.${required("workspace", model)} is required`;
  const appGroupPermissions = ws.appGroupPermissions ?? [];
  if (!isStringArray(appGroupPermissions)) return `${at}.appGroupPermissions must be an array of strings`;
  const sets = parseRefs(ws.appGroupPermissionSets ?? [], `${at}.appGroupPermissionSets`, "permissionSet", model);
  if (typeof sets === "string") return sets;
  const teams = ws.team ?? [];
  if (!Array.isArray(teams)) return `${at}.team must be an array`;
  const team: TeamInput[] = [];
  for (const [j, t] of teams.entries()) {
    const ref = isRecord(t) ? refOf(t, "team", model) : undefined;
    if (!isRecord(t) || !ref) return `${at}.team[${j}].${required("team", model)} is required`;
    const teamPermissions = t.teamPermissions ?? [];
    if (!isStringArray(teamPermissions)) return `${at}.team[${j}].teamPermissions must be an array of strings`;
    team.push({ team: ref, teamPermissions });
  }
  return { workspace, appGroupPermissions, appGroupPermissionSets: sets, team };
}
