import { randomUUID } from "node:crypto";

/**
 * Dashboard users (the SCIM family). Parsing is pure and reports the first problem as a SCIM
 * `detail`; the store keeps users by id and by lower-cased userName, and generates workspace and
 * team ids once per name so the same workspace has the same `appGroupId` on every user.
 */

const SCIM_USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";
export const SCIM_LIST_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:ListResponse";

type Team = { teamId: string; teamName: string; teamPermissions: string[] };
type Workspace = {
  appGroupId: string;
  appGroupName: string;
  appGroupPermissions: string[];
  team: Team[];
  appGroupPermissionSets: { appGroupPermissionSetName: string }[];
};
export type DashboardUser = {
  schemas: string[];
  id: string;
  userName: string;
  name: { givenName: string; familyName: string };
  department: string;
  lastSignInAt: string;
  permissions: { companyPermissions: string[]; appGroup: Workspace[] };
};

type WorkspaceInput = Omit<Workspace, "appGroupId" | "team"> & { team: Omit<Team, "teamId">[] };
export type DashboardUserInput = {
  userName: string;
  name: { givenName: string; familyName: string };
  department: string;
  companyPermissions: string[];
  appGroup: WorkspaceInput[];
};

export type ParseResult = { ok: true; value: DashboardUserInput } | { ok: false; detail: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isStringArray = (v: unknown): v is string[] =>
  Array.isArray(v) && v.every((s) => typeof s === "string" && s.length > 0);
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Pure: the complete resource POST and PUT need (`schemas`, `userName`, `name`, `department`, `permissions`). */
export function parseDashboardUser(body: unknown): ParseResult {
  const fail = (detail: string): ParseResult => ({ ok: false, detail });
  if (!isObject(body)) return fail("Request body must be a JSON object");
  if (!isStringArray(body.schemas) || !body.schemas.includes(SCIM_USER_SCHEMA))
    return fail(`schemas must contain ${SCIM_USER_SCHEMA}`);
  if (typeof body.userName !== "string" || !EMAIL.test(body.userName))
    return fail("userName is required and must be an email address");
  const name = body.name;
  if (!isObject(name) || typeof name.givenName !== "string" || typeof name.familyName !== "string") {
    return fail("name is required with givenName and familyName strings");
  }
  if (typeof body.department !== "string" || body.department.trim() === "")
    return fail("department is required and must be a non-empty string");
  const permissions = body.permissions;
  if (!isObject(permissions)) return fail("permissions is required and must be an object");
  const companyPermissions = permissions.companyPermissions ?? [];
  if (!isStringArray(companyPermissions)) return fail("permissions.companyPermissions must be an array of strings");
  const rawWorkspaces = permissions.appGroup ?? [];
  if (!Array.isArray(rawWorkspaces)) return fail("permissions.appGroup must be an array");
  const appGroup: WorkspaceInput[] = [];
  for (const [i, ws] of rawWorkspaces.entries()) {
    const parsed = parseWorkspace(ws, `permissions.appGroup[${i}]`);
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
      appGroup,
    },
  };
}

function parseWorkspace(ws: unknown, at: string): WorkspaceInput | string {
  if (!isObject(ws) || typeof ws.appGroupName !== "string" || ws.appGroupName === "")
    return `${at}.appGroupName is required`;
  const appGroupPermissions = ws.appGroupPermissions ?? [];
  if (!isStringArray(appGroupPermissions)) return `${at}.appGroupPermissions must be an array of strings`;
  const sets = ws.appGroupPermissionSets ?? [];
  if (
    !Array.isArray(sets) ||
    !sets.every(
      (s) => isObject(s) && typeof s.appGroupPermissionSetName === "string" && s.appGroupPermissionSetName !== "",
    )
  ) {
    return `${at}.appGroupPermissionSets must be objects with appGroupPermissionSetName`;
  }
  const teams = ws.team ?? [];
  if (!Array.isArray(teams)) return `${at}.team must be an array`;
  const team: Omit<Team, "teamId">[] = [];
  for (const [j, t] of teams.entries()) {
    if (!isObject(t) || typeof t.teamName !== "string" || t.teamName === "")
      return `${at}.team[${j}].teamName is required`;
    const teamPermissions = t.teamPermissions ?? [];
    if (!isStringArray(teamPermissions)) return `${at}.team[${j}].teamPermissions must be an array of strings`;
    team.push({ teamName: t.teamName, teamPermissions });
  }
  return {
    appGroupName: ws.appGroupName,
    appGroupPermissions,
    appGroupPermissionSets: sets.map((s) => ({
      appGroupPermissionSetName: (s as { appGroupPermissionSetName: string }).appGroupPermissionSetName,
    })),
    team,
  };
}

export class DashboardUserStore {
  readonly byId = new Map<string, DashboardUser>();
  private readonly idByUserName = new Map<string, string>();
  private readonly workspaceIds = new Map<string, string>();
  private readonly teamIds = new Map<string, string>();

  clear(): void {
    this.byId.clear();
    this.idByUserName.clear();
    this.workspaceIds.clear();
    this.teamIds.clear();
  }

  get(id: string): DashboardUser | undefined {
    return this.byId.get(id);
  }

  findByUserName(userName: string): DashboardUser | undefined {
    const id = this.idByUserName.get(userName.toLowerCase());
    return id === undefined ? undefined : this.byId.get(id);
  }

  /** Undefined when the userName is taken (the caller answers 409). */
  create(input: DashboardUserInput, now: Date): DashboardUser | undefined {
    const key = input.userName.toLowerCase();
    if (this.idByUserName.has(key)) return undefined;
    const user = this.materialise(randomUUID(), input, now.toISOString());
    this.byId.set(user.id, user);
    this.idByUserName.set(key, user.id);
    return user;
  }

  /** PUT: replaces everything but `id`, `userName` and `lastSignInAt`. */
  replace(existing: DashboardUser, input: DashboardUserInput): DashboardUser {
    const user = this.materialise(existing.id, { ...input, userName: existing.userName }, existing.lastSignInAt);
    this.byId.set(user.id, user);
    return user;
  }

  delete(id: string): boolean {
    const user = this.byId.get(id);
    if (!user) return false;
    this.byId.delete(id);
    this.idByUserName.delete(user.userName.toLowerCase());
    return true;
  }

  private materialise(id: string, input: DashboardUserInput, lastSignInAt: string): DashboardUser {
    return {
      schemas: [SCIM_USER_SCHEMA],
      id,
      userName: input.userName,
      name: { ...input.name },
      department: input.department,
      lastSignInAt,
      permissions: {
        companyPermissions: [...input.companyPermissions],
        appGroup: input.appGroup.map((ws) => ({
          appGroupId: this.generatedId(this.workspaceIds, ws.appGroupName),
          appGroupName: ws.appGroupName,
          appGroupPermissions: [...ws.appGroupPermissions],
          team: ws.team.map((t) => ({
            teamId: this.generatedId(this.teamIds, `${ws.appGroupName}\u0000${t.teamName}`),
            teamName: t.teamName,
            teamPermissions: [...t.teamPermissions],
          })),
          appGroupPermissionSets: ws.appGroupPermissionSets.map((s) => ({ ...s })),
        })),
      },
    };
  }

  private generatedId(map: Map<string, string>, name: string): string {
    let id = map.get(name);
    if (!id) map.set(name, (id = randomUUID().replace(/-/g, "").slice(0, 24)));
    return id;
  }
}
