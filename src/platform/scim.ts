import { byKey, sorted } from "../mapping/desired.js";
import { API_IDENTIFIER, ID_KEY_PREFIX, modelOfUser } from "../mapping/granular.js";
import type { DesiredDashboardUser, DesiredWorkspace } from "../mapping/types.js";
import {
  defaultRetryPolicy,
  type HttpOutcome,
  type HttpRequest,
  type HttpTransport,
  type RetryPolicy,
} from "./transport.js";
import {
  readPlatformList,
  readPlatformUser,
  SCIM_USER_SCHEMA,
  type PlatformUserRequest,
  type PlatformUserResource,
  type PlatformWorkspace,
} from "./types.js";

/**
 * The platform's SCIM user family: POST, GET by id, GET by `userName eq` filter, PUT, DELETE.
 * Every call is one budgeted request (per attempt), so each method takes the `beforeSend` hook
 * the reconciler uses to debit its ledger before anything leaves. The client itself keeps no
 * budget and never adds a call the caller did not ask for: a create is not retried after an
 * uncertain outcome (the caller resolves it by lookup), and a 409 is returned, not adopted.
 *
 * Methods return the transport's outcome; `readResource`/`readList` turn an `ok` body into the
 * comparable desired shape. 404 on GET/PUT/DELETE and 409 on POST arrive as `http_error`.
 */

export const SCIM_FAMILY = "scim";

export type ScimBeforeSend = NonNullable<HttpRequest["beforeSend"]>;

export type PlatformScimClientOptions = {
  transport: HttpTransport;
  /** PLATFORM_SCIM_TOKEN. */
  scimToken: string;
  /** PLATFORM_REQUEST_ORIGIN. */
  requestOrigin: string;
  /**
   * Retries cost budget, so the default is modest. Applies to GET, PUT and DELETE; POST follows
   * the transport's rule (retried only when provably not applied).
   */
  retry?: RetryPolicy;
  timeoutMs?: number;
};

/** An account as the platform answered it, with the identifiers its answer carried (learned for free). */
export type PlatformAccount = { id: string; user: DesiredDashboardUser; identifiers: PlatformIdentifier[] };

/** A name ↔ API identifier pair from a platform answer; a team belongs to its workspace's identifier. */
type PlatformIdentifier = {
  kind: "workspace" | "team" | "role" | "permissionSet";
  id: string;
  name: string;
  workspaceId: string | null;
};

export class PlatformScimClient {
  private readonly retry: RetryPolicy;

  constructor(private readonly options: PlatformScimClientOptions) {
    this.retry = options.retry ?? { ...defaultRetryPolicy, maxAttempts: 3 };
  }

  createUser(desired: DesiredDashboardUser, beforeSend?: ScimBeforeSend): Promise<HttpOutcome> {
    return this.call({ method: "POST", route: "/scim/v2/Users", body: toPlatformResource(desired) }, beforeSend);
  }

  getUser(id: string, beforeSend?: ScimBeforeSend): Promise<HttpOutcome> {
    return this.call({ method: "GET", route: "/scim/v2/Users/:id", params: { id } }, beforeSend);
  }

  /** Zero or one account; `readList` reads the ListResponse. The email is never logged (the route is). */
  findUserByUserName(userName: string, beforeSend?: ScimBeforeSend): Promise<HttpOutcome> {
    return this.call(
      { method: "GET", route: "/scim/v2/Users", query: { filter: userNameFilter(userName) } },
      beforeSend,
    );
  }

  replaceUser(id: string, desired: DesiredDashboardUser, beforeSend?: ScimBeforeSend): Promise<HttpOutcome> {
    return this.call(
      { method: "PUT", route: "/scim/v2/Users/:id", params: { id }, body: toPlatformResource(desired) },
      beforeSend,
    );
  }

  /** 204 when deleted; a 404 (`http_error`) means the account is already gone. */
  deleteUser(id: string, beforeSend?: ScimBeforeSend): Promise<HttpOutcome> {
    return this.call({ method: "DELETE", route: "/scim/v2/Users/:id", params: { id } }, beforeSend);
  }

  /** `byId`: the identifiers the caller names things by (see `fromPlatformResource`). */
  readResource(body: unknown, byId?: ReadonlySet<string>): PlatformAccount | undefined {
    const resource = readPlatformUser(body);
    return resource
      ? { id: resource.id, user: fromPlatformResource(resource, byId), identifiers: identifiersOf(resource) }
      : undefined;
  }

  readList(body: unknown, byId?: ReadonlySet<string>): PlatformAccount[] {
    return readPlatformList(body).map((r) => ({
      id: r.id,
      user: fromPlatformResource(r, byId),
      identifiers: identifiersOf(r),
    }));
  }

  private call(
    req: Pick<HttpRequest, "method" | "route" | "params" | "query" | "body">,
    beforeSend?: ScimBeforeSend,
  ): Promise<HttpOutcome> {
    return this.options.transport.request({
      ...req,
      family: SCIM_FAMILY,
      headers: { authorization: `Bearer ${this.options.scimToken}`, "x-request-origin": this.options.requestOrigin },
      retry: this.retry,
      ...(this.options.timeoutMs !== undefined ? { timeoutMs: this.options.timeoutMs } : {}),
      ...(beforeSend ? { beforeSend } : {}),
    });
  }
}

/** `userName eq "<email>"`, with the value quoted as a SCIM (JSON) string so quotes cannot break out. */
export function userNameFilter(userName: string): string {
  return `userName eq ${JSON.stringify(userName)}`;
}

/** A key of the desired state (a name, or `id:<identifier>`) as the platform's name-or-id field. */
function platformRef<N extends string, I extends string>(
  key: string,
  nameField: N,
  idField: I,
): { [K in N]: string } | { [K in I]: string } {
  return (key.startsWith(ID_KEY_PREFIX) ? { [idField]: key.slice(ID_KEY_PREFIX.length) } : { [nameField]: key }) as
    { [K in N]: string } | { [K in I]: string };
}

/** The identifiers a desired state names things by (its `id:` keys). */
export function identifierKeysOf(...users: (DesiredDashboardUser | null | undefined)[]): Set<string> {
  const ids = new Set<string>();
  const add = (key: string) => key.startsWith(ID_KEY_PREFIX) && ids.add(key.slice(ID_KEY_PREFIX.length));
  for (const user of users) {
    for (const role of user?.roles ?? []) add(role);
    for (const ws of user?.workspaces ?? []) {
      add(ws.appGroupName);
      ws.appGroupPermissionSets.forEach(add);
      for (const t of ws.team) add(t.teamName);
    }
  }
  return ids;
}

/** The complete resource POST and PUT need. Empty optional arrays are left out. */
export function toPlatformResource(desired: DesiredDashboardUser): PlatformUserRequest {
  return {
    schemas: [SCIM_USER_SCHEMA],
    userName: desired.userName,
    name: { givenName: desired.givenName, familyName: desired.familyName },
    department: desired.department,
    permissions: {
      companyPermissions: [...desired.companyPermissions],
      ...(desired.roles?.length ? { roles: desired.roles.map((r) => platformRef(r, "roleName", "roleId")) } : {}),
      appGroup: desired.workspaces.map((ws): PlatformWorkspace => ({
        ...platformRef(ws.appGroupName, "appGroupName", "appGroupId"),
        appGroupPermissions: [...ws.appGroupPermissions],
        ...(ws.appGroupPermissionSets.length
          ? {
              appGroupPermissionSets: ws.appGroupPermissionSets.map((s) =>
                platformRef(s, "appGroupPermissionSetName", "appGroupPermissionSetId"),
              ),
            }
          : {}),
        ...(ws.team.length
          ? {
              team: ws.team.map((t) => ({
                ...platformRef(t.teamName, "teamName", "teamId"),
                teamPermissions: [...t.teamPermissions],
              })),
            }
          : {}),
      })),
    },
  };
}

/** The name ↔ identifier pairs an answer carries. */
function identifiersOf(resource: Pick<PlatformUserResource, "permissions">): PlatformIdentifier[] {
  const out: PlatformIdentifier[] = [];
  // Only API identifiers (UUIDs): the legacy model's ids are the platform's internal ones.
  const add = (
    kind: PlatformIdentifier["kind"],
    id: string | undefined,
    name: string | undefined,
    ws: string | null,
  ) => {
    if (id && name && API_IDENTIFIER.test(id)) out.push({ kind, id: id.toLowerCase(), name, workspaceId: ws });
  };
  for (const role of resource.permissions?.roles ?? []) add("role", role.roleId, role.roleName, null);
  for (const ws of resource.permissions?.appGroup ?? []) {
    add("workspace", ws.appGroupId, ws.appGroupName, null);
    for (const set of ws.appGroupPermissionSets ?? [])
      add("permissionSet", set.appGroupPermissionSetId, set.appGroupPermissionSetName, null);
    for (const team of ws.team ?? []) add("team", team.teamId, team.teamName, ws.appGroupId?.toLowerCase() ?? null);
  }
  return out;
}

/**
 * A platform resource in the desired shape, normalised like `desiredDashboardUser` output
 * (sorted, de-duplicated, workspaces and teams of the same name merged, empty workspaces
 * dropped), with response-only fields (`id`, `lastSignInAt`) ignored. Workspaces, teams, roles and
 * permission sets are keyed by name, or by `id:<identifier>` for the identifiers in `byId` (those
 * the mapping names things by), so the answer compares with the desired state whatever the
 * platform now calls them. Granular strings mark the result `permissionModel: "granular"`.
 * So `isDeepStrictEqual(fromPlatformResource(r), desired)` means "nothing to change".
 */
export function fromPlatformResource(
  resource: Pick<PlatformUserResource, "userName" | "name" | "department" | "permissions">,
  byId: ReadonlySet<string> = new Set(),
): DesiredDashboardUser {
  const key = (name: string | undefined, id: string | undefined) =>
    id !== undefined && byId.has(id.toLowerCase()) ? `${ID_KEY_PREFIX}${id.toLowerCase()}` : (name ?? "");
  const workspaces = new Map<string, { permissions: string[]; sets: string[]; teams: Map<string, string[]> }>();
  for (const ws of resource.permissions?.appGroup ?? []) {
    const wsKey = key(ws.appGroupName, ws.appGroupId);
    const acc = workspaces.get(wsKey) ?? { permissions: [], sets: [], teams: new Map<string, string[]>() };
    workspaces.set(wsKey, acc);
    acc.permissions.push(...(ws.appGroupPermissions ?? []));
    acc.sets.push(
      ...(ws.appGroupPermissionSets ?? []).map((s) => key(s.appGroupPermissionSetName, s.appGroupPermissionSetId)),
    );
    for (const team of ws.team ?? []) {
      const teamKey = key(team.teamName, team.teamId);
      acc.teams.set(teamKey, [...(acc.teams.get(teamKey) ?? []), ...(team.teamPermissions ?? [])]);
    }
  }
  const out: DesiredWorkspace[] = [];
  for (const [appGroupName, acc] of workspaces) {
    const team = [...acc.teams]
      .map(([teamName, perms]) => ({ teamName, teamPermissions: sorted(perms) }))
      .sort(byKey("teamName"));
    if (acc.permissions.length === 0 && acc.sets.length === 0 && team.length === 0) continue;
    out.push({
      appGroupName,
      appGroupPermissions: sorted(acc.permissions),
      appGroupPermissionSets: sorted(acc.sets),
      team,
    });
  }
  const roles = sorted((resource.permissions?.roles ?? []).map((r) => key(r.roleName, r.roleId)));
  const user: DesiredDashboardUser = {
    userName: resource.userName,
    givenName: resource.name?.givenName ?? "",
    familyName: resource.name?.familyName ?? "",
    department: resource.department ?? "",
    companyPermissions: sorted(resource.permissions?.companyPermissions ?? []),
    ...(roles.length ? { roles } : {}),
    workspaces: out.sort(byKey("appGroupName")),
  };
  return modelOfUser(user) === "granular" ? { ...user, permissionModel: "granular" } : user;
}
