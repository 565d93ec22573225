import type { DepartmentPolicy, Mapping } from "./compiled.js";
import type { Assignment } from "./compiled.js";
import { grantingRules, type MappingGroup, type RuleMatch } from "./match.js";
import type { DesiredDashboardUser, DesiredTeam, DesiredWorkspace } from "./types.js";

/**
 * Group membership → the dashboard user the platform should hold. Pure and deterministic: the
 * same user, groups and mapping always give a deep-equal result (sorted, de-duplicated), which
 * is what lets the reconciler spend zero calls on a no-op.
 */

export type MappingUser = {
  userName: string;
  active: boolean;
  givenName?: string | null;
  familyName?: string | null;
  displayName?: string | null;
  /** The enterprise extension's department. */
  department?: string | null;
  /** The values the IdP assigned in the user's roles[] and entitlements[] (the catalogue's ids). */
  assigned?: readonly Assignment[];
};

/**
 * The desired dashboard user, or null when the user must have no account: inactive, or no
 * rule matches any of the user's groups and the IdP assigned no catalogue entry.
 */
export function desiredDashboardUser(
  user: MappingUser,
  groups: readonly MappingGroup[],
  mapping: Pick<Mapping, "rules" | "department"> & Partial<Pick<Mapping, "permissionModel" | "catalogue">>,
): DesiredDashboardUser | null {
  if (!user.active) return null;
  const matched = grantingRules(groups, user.assigned, mapping);
  if (matched.length === 0) return null;
  const { givenName, familyName } = personName(user);
  const granular = mapping.permissionModel === "granular";
  const { roles, ...permissions } = unionPermissions(matched, granular);
  return {
    userName: user.userName.trim(),
    givenName,
    familyName,
    department: resolveDepartment(matched, user.department, mapping.department),
    ...permissions,
    ...(roles.length ? { roles } : {}),
    ...(granular ? { permissionModel: "granular" as const } : {}),
  };
}

/** First matching rule that sets one; else the enterprise department (translated, allowed); else the default. */
function resolveDepartment(
  matched: readonly RuleMatch[],
  attribute: string | null | undefined,
  policy: DepartmentPolicy,
): string {
  const fromRule = matched.find((m) => m.rule.department !== undefined)?.rule.department;
  if (fromRule !== undefined) return fromRule;
  if (policy.fromAttribute && attribute != null && attribute.trim() !== "") {
    const translated = translateDepartment(attribute.trim(), policy.translate);
    if (!policy.allowed) return translated;
    // Case slips ("Engineering" for engineering) are accepted with the allowed spelling.
    const canonical = policy.allowed.find((a) => a.toLowerCase() === translated.toLowerCase());
    if (canonical !== undefined) return canonical;
  }
  return policy.default;
}

function translateDepartment(value: string, translate: Record<string, string>): string {
  if (Object.hasOwn(translate, value)) return translate[value]!;
  const lower = value.toLowerCase();
  const key = Object.keys(translate).find((k) => k.trim().toLowerCase() === lower);
  return key === undefined ? value : translate[key]!;
}

type WorkspaceAcc = { permissions: Set<string>; permissionSets: Set<string>; teams: Map<string, Set<string>> };

/**
 * Union per company, per workspace (by name) and per team (by name within its workspace).
 * Granular: the platform takes permissions OR one permission set per workspace. When the rules
 * a user matches give both, the explicit permissions win and the set is left out; of several
 * sets, the first rule's (file order). `mapping check` warns of rules that can collide so.
 */
function unionPermissions(
  matched: readonly RuleMatch[],
  granular: boolean,
): Pick<DesiredDashboardUser, "companyPermissions" | "workspaces"> & { roles: string[] } {
  const company = new Set<string>();
  const roles = new Set<string>();
  const workspaces = new Map<string, WorkspaceAcc>();
  for (const { rule } of matched) {
    for (const p of rule.companyPermissions) company.add(p);
    for (const r of rule.roles ?? []) roles.add(r);
    for (const ws of rule.workspaces) {
      let acc = workspaces.get(ws.name);
      if (!acc)
        workspaces.set(ws.name, (acc = { permissions: new Set(), permissionSets: new Set(), teams: new Map() }));
      for (const p of ws.permissions) acc.permissions.add(p);
      for (const s of ws.permissionSets) acc.permissionSets.add(s);
      for (const team of ws.teams) {
        let perms = acc.teams.get(team.name);
        if (!perms) acc.teams.set(team.name, (perms = new Set()));
        for (const p of team.permissions) perms.add(p);
      }
    }
  }
  const out: DesiredWorkspace[] = [...workspaces.entries()].map(([appGroupName, acc]) => ({
    appGroupName,
    appGroupPermissions: sorted(acc.permissions),
    appGroupPermissionSets: granular ? oneSetAtMost(acc) : sorted(acc.permissionSets),
    team: [...acc.teams.entries()]
      .map(([teamName, perms]): DesiredTeam => ({ teamName, teamPermissions: sorted(perms) }))
      .sort(byKey("teamName")),
  }));
  return { companyPermissions: sorted(company), roles: sorted(roles), workspaces: out.sort(byKey("appGroupName")) };
}

function oneSetAtMost(acc: WorkspaceAcc): string[] {
  if (acc.permissions.size > 0) return [];
  const [first] = acc.permissionSets; // a Set keeps insertion order: the first matching rule's
  return first === undefined ? [] : [first];
}

/**
 * The platform requires both name parts. IdPs may omit them, so fall back to the displayName,
 * then to the email's local part, rather than fail the user.
 */
function personName(user: MappingUser): { givenName: string; familyName: string } {
  const given = user.givenName?.trim() ?? "";
  const family = user.familyName?.trim() ?? "";
  if (given && family) return { givenName: given, familyName: family };
  const display = (user.displayName?.trim() ?? "").split(/\s+/).filter(Boolean);
  const local = user.userName.split("@")[0] ?? user.userName;
  return {
    givenName: given || display[0] || local,
    familyName: family || display.slice(1).join(" ") || local,
  };
}

export function sorted(values: Iterable<string>): string[] {
  return [...new Set(values)].sort();
}

export function byKey<K extends string>(key: K) {
  return (a: Record<K, string>, b: Record<K, string>) => (a[key] < b[key] ? -1 : a[key] > b[key] ? 1 : 0);
}
