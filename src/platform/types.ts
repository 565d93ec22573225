import { z } from "zod";

/**
 * The platform's SCIM dashboard-user shapes (platform-api.md, "Dashboard user resource").
 * Requests carry the complete resource; responses add service-generated ids (`id`,
 * `appGroupId`, `teamId`) and `lastSignInAt`. Responses are read leniently (unknown fields kept
 * out, missing arrays read as empty) because a stricter reader would turn a harmless platform
 * addition into an outage.
 */

export const SCIM_USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";

/**
 * Granular model (shared/platform-granular.md): a workspace, team, role or permission set is
 * named by name or by API identifier on writes; answers carry both.
 */
type PlatformTeam = { teamId?: string; teamName?: string; teamPermissions: string[] };
type PlatformPermissionSet = { appGroupPermissionSetName?: string; appGroupPermissionSetId?: string };
type PlatformRole = { roleName?: string; roleId?: string };

export type PlatformWorkspace = {
  appGroupId?: string;
  appGroupName?: string;
  appGroupPermissions: string[];
  appGroupPermissionSets?: PlatformPermissionSet[];
  team?: PlatformTeam[];
};

type PlatformPermissions = { companyPermissions: string[]; roles?: PlatformRole[]; appGroup: PlatformWorkspace[] };

/** What POST and PUT send: the complete resource. */
export type PlatformUserRequest = {
  schemas: string[];
  userName: string;
  name: { givenName: string; familyName: string };
  department: string;
  permissions: PlatformPermissions;
};

/** What GET, POST and PUT answer. */
export type PlatformUserResource = PlatformUserRequest & { id: string; lastSignInAt?: string };

const strings = z.array(z.string()).catch([]);
const optionalStrings = z.array(z.string()).optional().catch(undefined);

const optionalString = z.string().optional().catch(undefined);

const teamReader = z.object({
  teamId: optionalString,
  teamName: z.string(),
  teamPermissions: strings.default([]),
});

const workspaceReader = z.object({
  appGroupId: optionalString,
  appGroupName: z.string(),
  appGroupPermissions: strings.default([]),
  appGroupPermissionSets: z
    .array(z.object({ appGroupPermissionSetName: z.string(), appGroupPermissionSetId: optionalString }))
    .optional()
    .catch(undefined),
  team: z.array(teamReader).optional().catch(undefined),
});

const roleReader = z.object({ roleName: z.string(), roleId: optionalString });

/** Reads a response resource; `id` and `userName` are what make it usable at all. */
const platformUserReader = z.object({
  schemas: optionalStrings.transform((s) => s ?? [SCIM_USER_SCHEMA]),
  id: z.string().min(1),
  userName: z.string().min(1),
  name: z
    .object({ givenName: z.string().catch(""), familyName: z.string().catch("") })
    .catch({ givenName: "", familyName: "" })
    .default({ givenName: "", familyName: "" }),
  department: z.string().catch("").default(""),
  lastSignInAt: z.string().optional().catch(undefined),
  permissions: z
    .object({
      companyPermissions: strings.default([]),
      roles: z.array(roleReader).optional().catch(undefined),
      appGroup: z.array(workspaceReader).catch([]).default([]),
    })
    .catch({ companyPermissions: [], appGroup: [] })
    .default({ companyPermissions: [], appGroup: [] }),
});

export function readPlatformUser(body: unknown): PlatformUserResource | undefined {
  const parsed = platformUserReader.safeParse(body);
  return parsed.success ? (parsed.data as PlatformUserResource) : undefined;
}

/** The resources of a ListResponse; entries that are not readable users are skipped. */
export function readPlatformList(body: unknown): PlatformUserResource[] {
  const resources = (body as { Resources?: unknown } | null | undefined)?.Resources;
  if (!Array.isArray(resources)) return [];
  return resources.map(readPlatformUser).filter((r): r is PlatformUserResource => r !== undefined);
}
