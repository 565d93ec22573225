import type { Mapping, MappingRule } from "./compiled.js";
import { assignedEntries } from "./catalogue.js";
import type { AssignedAttribute, Assignment, CatalogueType } from "./compiled.js";

/**
 * Which mapping rules an IdP user's groups match, and why. Pure; the admin UI shows the result
 * ("rule 2 (line 8) matched group 'Analysts-EU' by pattern").
 */

/** `id` is the IdP group's SCIM id (kept in the reasons for a grant). */
export type MappingGroup = { id?: string; displayName: string; externalId?: string | null };

export type MatchReason = "group" | "groupExternalId" | "groupPattern";

export type RuleMatch = {
  rule: MappingRule;
  /** Every group that matched this rule, each with the first matcher that matched it. */
  matches: { group: MappingGroup; by: MatchReason }[];
  /** A catalogue entry's rule: the IdP assigned it as a role or entitlement (src/mapping/catalogue.ts). */
  assigned?: AssignedReason;
};

/** Which catalogue entry the IdP assigned, and how ("assigned role Marketer in Okta"). */
export type AssignedReason = {
  id: string;
  displayName: string;
  type: CatalogueType;
  attributes: AssignedAttribute[];
  assignedIn: string;
};

/** The reason a group matches a rule, or undefined. A rule's matchers are alternatives (OR). */
export function ruleMatchesGroup(rule: MappingRule, group: MappingGroup): MatchReason | undefined {
  const name = group.displayName.trim().toLowerCase();
  if (rule.groups.some((g) => g.trim().toLowerCase() === name)) return "group";
  if (rule.groupExternalId !== undefined && group.externalId != null && group.externalId === rule.groupExternalId)
    return "groupExternalId";
  if (rule.groupPattern?.test(group.displayName)) return "groupPattern";
  return undefined;
}

/** The rules that match at least one of the groups, in file order. */
export function matchingRules(groups: readonly MappingGroup[], mapping: Pick<Mapping, "rules">): RuleMatch[] {
  const result: RuleMatch[] = [];
  for (const rule of mapping.rules) {
    const matches: RuleMatch["matches"] = [];
    for (const group of groups) {
      const by = ruleMatchesGroup(rule, group);
      if (by) matches.push({ group, by });
    }
    if (matches.length) result.push({ rule, matches });
  }
  return result;
}

/**
 * The group rules the user's groups match, then the catalogue entries the IdP assigned to the user
 * (roles[] and entitlements[]), each as a rule match: one list, so every grant has its reasons.
 */
export function grantingRules(
  groups: readonly MappingGroup[],
  assignments: readonly Assignment[] | undefined,
  mapping: Pick<Mapping, "rules"> & Partial<Pick<Mapping, "catalogue">>,
): RuleMatch[] {
  const matched = matchingRules(groups, mapping);
  if (!mapping.catalogue) return matched;
  const { assignedIn } = mapping.catalogue;
  for (const { entry, attributes } of assignedEntries(assignments, mapping.catalogue))
    matched.push({
      rule: entry.rule,
      matches: [],
      assigned: { id: entry.id, displayName: entry.displayName, type: entry.type, attributes, assignedIn },
    });
  return matched;
}
