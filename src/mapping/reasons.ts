import {
  GRANULAR_TEAM_PERMISSIONS,
  GRANULAR_WORKSPACE_PERMISSIONS,
  isGranularOnly,
} from "../vocabulary/permissions.js";
import type { DepartmentPolicy, Mapping, MappingRule } from "./compiled.js";
import { assignmentWords } from "./catalogue.js";
import type { Assignment } from "./compiled.js";
import { grantingRules, type AssignedReason, type MappingGroup, type RuleMatch } from "./match.js";
import type { DesiredDashboardUser } from "./types.js";

/**
 * One user's grants on the platform and why they have them: the rules and groups that give each.
 * Pure: the access report (src/review/access/) feeds it what the platform held, the user's IdP
 * groups and the mapping in force.
 */

type GrantScope = "company" | "role" | "workspace" | "permissionSet" | "team" | "department";

/**
 * One grant as a reviewer sees it. `bundle`: the strings of a granular bundle (what one rule gives
 * in one workspace, or in one team); `permission` then names that rule (`bundleLabel`). Without
 * `bundle`, `permission` is the one string, role or permission set granted.
 */
export type Grant = {
  scope: GrantScope;
  workspace: string | null;
  team: string | null;
  permission: string;
  bundle?: string[];
};

/**
 * A rule that gives the grant, with the user's groups that match it (names, and ids in the same
 * order); or a catalogue entry the IdP assigned (`assigned`; its `rule` is the entry's line, and
 * no group gives it).
 */
export type GrantReason =
  | {
      rule: { index: number; line: number; file: string; description: string | null };
      groups: string[];
      groupIds: (string | null)[];
      assigned?: AssignedReason;
    }
  | { source: "department-attribute" | "department-default" };
type RuleReason = Extract<GrantReason, { rule: unknown }>;

/** A grant with every reason for it. */
export type ExplainedGrant = Grant & { reasons: GrantReason[] };

export const grantKey = (g: Grant): string => JSON.stringify([g.scope, g.workspace, g.team, g.permission]);

/**
 * Every grant a held dashboard user carries, one per string: company, role, workspace, permission
 * set, team permissions and the department. The department is listed only beside some access: on
 * its own (a stripped account, kept with no permissions until its delete) it grants nothing.
 * Reviews group a granular user's strings (`explainGrants`); denies and history stay per string.
 */
export function grantsOf(user: DesiredDashboardUser): Grant[] {
  const grants: Grant[] = user.companyPermissions.map((permission) => ({
    scope: "company",
    workspace: null,
    team: null,
    permission,
  }));
  for (const permission of user.roles ?? []) grants.push({ scope: "role", workspace: null, team: null, permission });
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

/** Whether `rule` gives the grant; a bundle, when it gives any of its strings. */
function ruleGives(rule: MappingRule, g: Grant): boolean {
  if (g.bundle) {
    const { bundle, ...single } = g;
    return bundle.some((permission) => ruleGives(rule, { ...single, permission }));
  }
  if (g.scope === "company") return rule.companyPermissions.includes(g.permission);
  if (g.scope === "role") return rule.roles.includes(g.permission);
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
  return matched
    .filter((m) => ruleGives(m.rule, grant))
    .map((m) => ruleReason(m.rule, m.matches, mapping.source, m.assigned));
}

function ruleReason(
  rule: MappingRule,
  matches: { group: MappingGroup }[],
  file: string,
  assigned?: AssignedReason,
): RuleReason {
  return {
    rule: { index: rule.index, line: rule.line, file, description: rule.description ?? null },
    groups: matches.map((m) => m.group.displayName),
    groupIds: matches.map((m) => m.group.id ?? null),
    ...(assigned ? { assigned } : {}),
  };
}

/**
 * Why `user` holds each of its grants under `mapping` with these IdP groups and department
 * attribute, as reviewable grants (`reviewableGrants`). The reconciler stores it with the log
 * entry that applies a state (the reasons then; a campaign's items come from them); the access
 * report computes it for today.
 */
export function explainGrants(
  user: DesiredDashboardUser,
  groups: readonly MappingGroup[],
  mapping: Pick<Mapping, "rules" | "department" | "source"> & Partial<Pick<Mapping, "catalogue">>,
  departmentAttribute: string | null,
  assigned?: readonly Assignment[],
): ExplainedGrant[] {
  const matched = grantingRules(groups, assigned, mapping);
  const explained = grantsOf(user).map((grant) => ({
    ...grant,
    reasons: reasonsFor(grant, matched, mapping, departmentAttribute),
  }));
  return reviewableGrants(user, explained);
}

/**
 * Whether a state's grants are reviewed by bundle: a granular state (so marked, or holding a role
 * or a string only the granular model has). One legacy `basic_access` is 43 granular strings; one
 * row each would bury a review. Legacy states keep one row per string, as they always had: their
 * strings are few, each means a lot, and reviews, exports and denies already decided stay as they were.
 */
export function reviewedByBundle(user: DesiredDashboardUser): boolean {
  if (user.permissionModel === "granular" || (user.roles?.length ?? 0) > 0) return true;
  return user.workspaces.some(
    (ws) => ws.appGroupPermissions.some(isGranularOnly) || ws.team.some((t) => t.teamPermissions.some(isGranularOnly)),
  );
}

/** A state's explained grants (one per string, or already bundled) as a reviewer sees them. */
export function reviewableGrants(user: DesiredDashboardUser, explained: readonly ExplainedGrant[]): ExplainedGrant[] {
  return reviewedByBundle(user) ? bundleGrants(explained) : [...explained];
}

/** The `permission` of the bundle of strings no rule in force gives. */
export const NO_RULE = "no rule";

/**
 * How a bundle names the rule it comes from: "rule 'EU marketers'", or "rule #3" when it has no
 * description. The campaign's SQL falls back to the second form (src/db/campaigns/start.ts).
 */
export function bundleLabel(
  rule: { index: number; description: string | null } | null,
  assigned?: AssignedReason,
): string {
  if (!rule) return NO_RULE;
  if (assigned) return assignedLabel(assigned);
  return rule.description ? `rule '${rule.description}'` : `rule #${rule.index + 1}`;
}

/**
 * The workspace and team strings of one state grouped: per workspace (and per team), one bundle per
 * rule that gives some, in file order, then one of the strings no rule gives. A string two rules
 * give belongs to the first rule's bundle, whose only reason is that rule. Other grants (company,
 * role, permission set, department) and bundles already made pass as they are.
 */
function bundleGrants(explained: readonly ExplainedGrant[]): ExplainedGrant[] {
  const out: ExplainedGrant[] = [];
  let run: { key: string; bundles: Map<number, ExplainedGrant & { bundle: string[] }> } | undefined;
  const flush = () => {
    if (run) out.push(...[...run.bundles.entries()].sort(([a], [b]) => a - b).map(([, b]) => b));
    run = undefined;
  };
  for (const grant of explained) {
    if ((grant.scope !== "workspace" && grant.scope !== "team") || grant.bundle) {
      flush();
      out.push(grant);
      continue;
    }
    const key = JSON.stringify([grant.scope, grant.workspace, grant.team]);
    if (run?.key !== key) {
      flush();
      run = { key, bundles: new Map() };
    }
    const owner = grant.reasons.find((r): r is RuleReason => "rule" in r);
    const order = owner ? owner.rule.index : Number.MAX_SAFE_INTEGER;
    let bundle = run.bundles.get(order);
    if (!bundle)
      run.bundles.set(
        order,
        (bundle = {
          scope: grant.scope,
          workspace: grant.workspace,
          team: grant.team,
          permission: bundleLabel(owner?.rule ?? null, owner?.assigned),
          bundle: [],
          reasons: owner ? [owner] : [],
        }),
      );
    bundle.bundle.push(grant.permission);
  }
  flush();
  return out;
}

/** The strings a grant gives: a bundle's, or its one string, role or set; the department gives none. */
export function stringsOf(grant: Grant): string[] {
  if (grant.bundle) return grant.bundle;
  return grant.scope === "department" ? [] : [grant.permission];
}

/** Display names the platform publishes beside a SCIM string (shared/platform-granular.md). */
const DISPLAY_NAMES: Readonly<Record<string, string>> = { admin: "Workspace Admin" };

/** A string with the platform's display name where it publishes one: "admin (Workspace Admin)". */
const withDisplayName = (permission: string): string =>
  Object.hasOwn(DISPLAY_NAMES, permission) ? `${permission} (${DISPLAY_NAMES[permission]})` : permission;

/** The documentation's order (basic_access's strings first): the first strings of a bundle then say the most. */
const DOCUMENTED_ORDER = new Map(
  [...new Set([...GRANULAR_WORKSPACE_PERMISSIONS, ...GRANULAR_TEAM_PERMISSIONS])].map((p, i) => [p, i]),
);
/** The strings only the granular model has: one in a state has it reviewed by bundle (`reviewedByBundle`). */
export const GRANULAR_ONLY_STRINGS: readonly string[] = [...DOCUMENTED_ORDER.keys()].filter(isGranularOnly);

const documentedFirst = (a: string, b: string) =>
  (DOCUMENTED_ORDER.get(a) ?? Infinity) - (DOCUMENTED_ORDER.get(b) ?? Infinity) || (a < b ? -1 : a > b ? 1 : 0);

/**
 * A bundle in words, with its first strings in the documentation's order: "45 permissions in EU
 * Production from rule 'EU marketers': view_campaigns, edit_campaigns, archive_campaigns, …".
 */
export function bundleWords(g: {
  scope: string;
  workspace: string | null;
  team: string | null;
  permission: string;
  bundle: readonly string[];
}): string {
  const n = g.bundle.length;
  const where = g.scope === "team" ? `team ${g.team} of ${g.workspace}` : g.workspace;
  const shown = [...g.bundle]
    .sort(documentedFirst)
    .slice(0, n > 4 ? 3 : 4)
    .map(withDisplayName);
  return `${n} permission${n === 1 ? "" : "s"} in ${where} ${bundleOrigin(g.permission)}: ${shown.join(", ")}${n > 4 ? ", …" : ""}`;
}

/** Where a bundle comes from, from its label: "from rule 'EU marketers'", "not granted by any rule", "assigned role … in Okta". */
export function bundleOrigin(label: string): string {
  if (label.startsWith("assigned ")) return label;
  return label === NO_RULE ? "not granted by any rule" : `from ${label}`;
}

/** A catalogue grant in words: "assigned role Marketer – Fashion Brands in Okta". */
export function assignedLabel(a: Pick<AssignedReason, "displayName" | "type" | "attributes" | "assignedIn">): string {
  return assignmentWords(a, a.attributes, a.assignedIn);
}
