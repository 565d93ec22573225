import type { MappingRule } from "../../mapping/compiled.js";
import type { RuleMatch } from "../../mapping/match.js";
import { assignedLabel } from "../../mapping/reasons.js";
import type { DesiredDashboardUser } from "../../mapping/types.js";
import type { Equivalents } from "../../mapping/granular.js";
import { diffInSameTerms, type Change } from "../../reconcile/diff.js";

/** One user's change under a draft: what they gain and lose. */
export type MappingChange = { userName: string; gains: string[]; losses: string[] };

/** Mapping rules and their effects in the admin UI's words. Pure; table-tested. */

export function ruleName(rule: MappingRule): string {
  return `${rule.description ?? `Rule ${rule.index + 1}`} (line ${rule.line})`;
}

/** Which IdP groups a rule matches: its matchers are alternatives. */
export function ruleGroupsText(rule: MappingRule): string {
  const parts = [
    ...rule.groups.map((g) => `"${g}"`),
    ...(rule.groupExternalId !== undefined ? [`externalId ${rule.groupExternalId}`] : []),
    ...(rule.groupPattern ? [`pattern /${rule.groupPattern.source}/`] : []),
  ];
  return parts.join(" or ") || "—";
}

/** What a rule grants, e.g. `company: admin; EU Production: basic_access; team EU Production/Lifecycle: basic_access`. */
export function ruleGrantsText(rule: MappingRule): string {
  const parts: string[] = [];
  if (rule.department !== undefined) parts.push(`department ${rule.department}`);
  if (rule.companyPermissions.length) parts.push(`company: ${rule.companyPermissions.join(", ")}`);
  if (rule.roles?.length) parts.push(`roles: ${rule.roles.join(", ")}`);
  for (const ws of rule.workspaces) {
    if (ws.permissions.length || (!ws.permissionSets.length && !ws.teams.length))
      parts.push(`${ws.name}: ${listed(ws.permissions)}`);
    if (ws.permissionSets.length) parts.push(`${ws.name} permission sets: ${ws.permissionSets.join(", ")}`);
    for (const team of ws.teams) parts.push(`team ${ws.name}/${team.name}: ${listed(team.permissions)}`);
  }
  return parts.join("; ") || "nothing";
}

/** Longer lists than this are written as their count and first few (`listed`), their strings in `ruleGrantLists`. */
const LISTED_IN_FULL = 12;

/** A rule's list of strings that `ruleGrantsText` abbreviates: where it applies, and all its strings. */
export type GrantList = { label: string; strings: string[] };

/** The lists `ruleGrantsText` writes as a count and first few, in full: the admin pages fold them (<details>). */
function ruleGrantLists(rule: MappingRule): GrantList[] {
  const lists: GrantList[] = [];
  for (const ws of rule.workspaces) {
    lists.push({ label: ws.name, strings: ws.permissions });
    for (const team of ws.teams) lists.push({ label: `team ${ws.name}/${team.name}`, strings: team.permissions });
  }
  return lists.filter((l) => l.strings.length > LISTED_IN_FULL).map((l) => ({ ...l, strings: [...l.strings] }));
}

/** A rule's long lists, as an optional field: a rule without one reads as it always did. */
export function grantListsOf(rule: MappingRule): { lists?: GrantList[] } {
  const lists = ruleGrantLists(rule);
  return lists.length ? { lists } : {};
}

/** A permission list in words; a long (granular) one as its count and first few. */
function listed(permissions: readonly string[]): string {
  if (!permissions.length) return "(no permissions)";
  if (permissions.length <= LISTED_IN_FULL) return permissions.join(", ");
  return `${permissions.length} permissions (${permissions.slice(0, 4).join(", ")}, …)`;
}

const REASON = { group: "by name", groupExternalId: "by externalId", groupPattern: "by pattern" } as const;

/** "Rule 2 (line 8) — group "Analysts-EU" by pattern". */
export function matchedRuleText(match: RuleMatch): string {
  if (match.assigned) return `${assignedLabel(match.assigned)} (catalogue '${match.assigned.id}')`;
  const groups = match.matches.map((m) => `"${m.group.displayName}" ${REASON[m.by]}`).join(", ");
  return `${ruleName(match.rule)} — group ${groups}`;
}

/** `equivalents`: a legacy state and a granular one are compared in granular terms (a migration changes nothing). */
export function mappingChangeOf(
  userName: string,
  current: DesiredDashboardUser | null,
  draft: DesiredDashboardUser | null,
  equivalents: Equivalents = {},
): MappingChange | undefined {
  const changes = diffInSameTerms(current, draft, equivalents);
  if (!changes.length) return undefined;
  const accountChange = changes.some((c) => c.kind === "account");
  const gains: string[] = [];
  const losses: string[] = [];
  for (const change of changes) {
    if (change.kind === "account") (change.new === "present" ? gains : losses).push("dashboard account");
    else if (change.kind === "set" && !accountChange)
      gains.push(`${change.path}: ${change.old ?? "—"} → ${change.new ?? "—"}`);
    else if (change.kind === "permissions") {
      const label = permissionLabel(change);
      gains.push(...change.added.map((p) => `${label}${p}`));
      losses.push(...change.removed.map((p) => `${label}${p}`));
    }
  }
  return { userName, gains, losses };
}

const TEAM_PATH = /^workspaces\[(.+)\]\.teams\[(.+)\]\.permissions$/;
const WORKSPACE_PATH = /^workspaces\[(.+)\]\.(permissions|permissionSets)$/;

function permissionLabel(change: Extract<Change, { kind: "permissions" }>): string {
  if (change.path === "companyPermissions") return "company: ";
  const team = TEAM_PATH.exec(change.path);
  if (team) return `team ${team[1]}/${team[2]}: `;
  const workspace = WORKSPACE_PATH.exec(change.path);
  if (workspace)
    return workspace[2] === "permissionSets"
      ? `workspace ${workspace[1]} permission set: `
      : `workspace ${workspace[1]}: `;
  return `${change.path}: `;
}
