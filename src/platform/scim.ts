import { byKey, sorted } from "../mapping/desired.js";
import type { DesiredDashboardUser, DesiredWorkspace } from "../mapping/types.js";
import {
  defaultRetryPolicy,
  type HttpOutcome,
  type HttpRequest,
  type HttpTransport,
  type RetryPolicy,
} from "./http.js";
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

export type PlatformAccount = { id: string; user: DesiredDashboardUser };

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

  readResource(body: unknown): PlatformAccount | undefined {
    const resource = readPlatformUser(body);
    return resource ? { id: resource.id, user: fromPlatformResource(resource) } : undefined;
  }

  readList(body: unknown): PlatformAccount[] {
    return readPlatformList(body).map((r) => ({ id: r.id, user: fromPlatformResource(r) }));
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

/** The complete resource POST and PUT need. Empty optional arrays are left out. */
export function toPlatformResource(desired: DesiredDashboardUser): PlatformUserRequest {
  return {
    schemas: [SCIM_USER_SCHEMA],
    userName: desired.userName,
    name: { givenName: desired.givenName, familyName: desired.familyName },
    department: desired.department,
    permissions: {
      companyPermissions: [...desired.companyPermissions],
      appGroup: desired.workspaces.map((ws): PlatformWorkspace => ({
        appGroupName: ws.appGroupName,
        appGroupPermissions: [...ws.appGroupPermissions],
        ...(ws.appGroupPermissionSets.length
          ? { appGroupPermissionSets: ws.appGroupPermissionSets.map((name) => ({ appGroupPermissionSetName: name })) }
          : {}),
        ...(ws.team.length
          ? { team: ws.team.map((t) => ({ teamName: t.teamName, teamPermissions: [...t.teamPermissions] })) }
          : {}),
      })),
    },
  };
}

/**
 * A platform resource in the desired shape, normalised like `desiredDashboardUser` output
 * (sorted, de-duplicated, workspaces and teams of the same name merged, empty workspaces
 * dropped), with response-only fields (`id`, `appGroupId`, `teamId`, `lastSignInAt`) ignored.
 * So `isDeepStrictEqual(fromPlatformResource(r), desired)` means "nothing to change".
 */
export function fromPlatformResource(
  resource: Pick<PlatformUserResource, "userName" | "name" | "department" | "permissions">,
): DesiredDashboardUser {
  const workspaces = new Map<string, { permissions: string[]; sets: string[]; teams: Map<string, string[]> }>();
  for (const ws of resource.permissions?.appGroup ?? []) {
    const acc = workspaces.get(ws.appGroupName) ?? { permissions: [], sets: [], teams: new Map<string, string[]>() };
    workspaces.set(ws.appGroupName, acc);
    acc.permissions.push(...(ws.appGroupPermissions ?? []));
    acc.sets.push(...(ws.appGroupPermissionSets ?? []).map((s) => s.appGroupPermissionSetName));
    for (const team of ws.team ?? [])
      acc.teams.set(team.teamName, [...(acc.teams.get(team.teamName) ?? []), ...(team.teamPermissions ?? [])]);
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
  return {
    userName: resource.userName,
    givenName: resource.name?.givenName ?? "",
    familyName: resource.name?.familyName ?? "",
    department: resource.department ?? "",
    companyPermissions: sorted(resource.permissions?.companyPermissions ?? []),
    workspaces: out.sort(byKey("appGroupName")),
  };
}
