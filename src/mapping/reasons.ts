import type { DepartmentPolicy, Mapping, MappingRule } from "./file.js";
import { matchingRules, type MappingGroup, type RuleMatch } from "./match.js";
import type { DesiredDashboardUser } from "./types.js";

/**
 * One user's grants on the platform and why they have them: the rules and groups that give each.
 * Pure: the access report (src/admin/access/) feeds it what the platform held, the user's IdP
 * groups and the mapping in force.
 */

type GrantScope = "company" | "workspace" | "permissionSet" | "team" | "department";

export type Grant = { scope: GrantScope; workspace: string | null; team: string | null; permission: string };

/** A rule that gives the grant, with the user's groups that match it (names, and ids in the same order). */
export type GrantReason =
  | {
      rule: { index: number; line: number; file: string; description: string | null };
      groups: string[];
      groupIds: (string | null)[];
    }
  | { source: "department-attribute" | "department-default" };

/** A grant with every reason for it. */
export type ExplainedGrant = Grant & { reasons: GrantReason[] };

export const grantKey = (g: Grant): string => JSON.stringify([g.scope, g.workspace, g.team, g.permission]);

/**
 * Every grant a held dashboard user carries: company, workspace, permission set, team permissions
 * and the department. The department is listed only beside some access: on its own (a stripped
 * account, kept with no permissions until its delete) it grants nothing.
 */
export function grantsOf(user: DesiredDashboardUser): Grant[] {
  const grants: Grant[] = user.companyPermissions.map((permission) => ({
    scope: "company",
    workspace: null,
    team: null,
    permission,
  }));
  for (const ws of user.workspaces) {
    const workspace = ws.appGroupName;
    for (const permission of ws.appGroupPermissions)
      grants.push({ scope: "workspace", workspace, team: null, permission });
    for (const permission of ws.appGroupPermissionSets)
      grants.push({ scope: "permissionSet", workspace, team: null, permission });
    for (const team of ws.team)
      for (const permission of team.teamPermissions)
        grants.push({ scope: "team", workspace, team: team.teamName, permission });
  }
  if (user.department && grants.length)
    grants.push({ scope: "department", workspace: null, team: null, permission: user.department });
  return grants;
}

function ruleGives(rule: MappingRule, g: Grant): boolean {
  if (g.scope === "company") return rule.companyPermissions.includes(g.permission);
  if (g.scope === "department") return rule.department === g.permission;
  return rule.workspaces.some((ws) => {
    if (ws.name !== g.workspace) return false;
    if (g.scope === "workspace") return ws.permissions.includes(g.permission);
    if (g.scope === "permissionSet") return ws.permissionSets.includes(g.permission);
    return ws.teams.some((t) => t.name === g.team && t.permissions.includes(g.permission));
  });
}

/**
 * Why the user holds `grant` under the mapping in force and their groups now (`matched`, from
 * `matchingRules`, computed once per user): every rule that
 * gives it (all of them, not the first). Empty when nothing grants it any more (a past mapping
 * or a past membership did; the report then points at the log entry that applied it).
 */
export function reasonsFor(
  grant: Grant,
  matched: readonly RuleMatch[],
  mapping: { department: DepartmentPolicy; source: string },
  departmentAttribute: string | null,
): GrantReason[] {
  if (grant.scope === "department") {
    const first = matched.find((m) => m.rule.department !== undefined);
    if (first)
      return first.rule.department === grant.permission ? [ruleReason(first.rule, first.matches, mapping.source)] : [];
    if (mapping.department.fromAttribute && departmentAttribute?.trim()) return [{ source: "department-attribute" }];
    return grant.permission === mapping.department.default ? [{ source: "department-default" }] : [];
  }
  return matched.filter((m) => ruleGives(m.rule, grant)).map((m) => ruleReason(m.rule, m.matches, mapping.source));
}

function ruleReason(rule: MappingRule, matches: { group: MappingGroup }[], file: string): GrantReason {
  return {
    rule: { index: rule.index, line: rule.line, file, description: rule.description ?? null },
    groups: matches.map((m) => m.group.displayName),
    groupIds: matches.map((m) => m.group.id ?? null),
  };
}

/**
 * Why `user` holds each of its grants under `mapping` with these IdP groups and department
 * attribute. The reconciler stores it with the log entry that applies a state (the reasons then);
 * the access report computes it for today.
 */
export function explainGrants(
  user: DesiredDashboardUser,
  groups: readonly MappingGroup[],
  mapping: Pick<Mapping, "rules" | "department" | "source">,
  departmentAttribute: string | null,
): ExplainedGrant[] {
  const matched = matchingRules(groups, mapping);
  return grantsOf(user).map((grant) => ({
    ...grant,
    reasons: reasonsFor(grant, matched, mapping, departmentAttribute),
  }));
}
