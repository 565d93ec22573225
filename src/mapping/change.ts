import type { Mapping, MappingRule } from "../config/mapping.js";
import { ruleMatchesGroup, type MappingGroup } from "./match.js";

/**
 * Which users a mapping reload can affect, without deriving every user: a user's desired state
 * depends only on the department policy and on the rules (content and file position) that match
 * their groups. So if the policy changed, everyone with an account may change; otherwise only
 * members of groups whose matching rules differ. Conservative: moving a rule up or down counts
 * as a change for the groups it matches, since rule order decides the department.
 */
export type MappingChangeImpact<G extends MappingGroup> = { all: true } | { all: false; groups: G[] };

export function affectedByMappingChange<G extends MappingGroup>(
  before: Pick<Mapping, "rules" | "department">,
  after: Pick<Mapping, "rules" | "department">,
  groups: readonly G[],
): MappingChangeImpact<G> {
  if (JSON.stringify(before.department) !== JSON.stringify(after.department)) return { all: true };
  const signature = (mapping: Pick<Mapping, "rules">, group: G) =>
    JSON.stringify(mapping.rules.filter((rule) => ruleMatchesGroup(rule, group) !== undefined).map(ruleMeaning));
  return { all: false, groups: groups.filter((g) => signature(before, g) !== signature(after, g)) };
}

/** What a rule grants and where it sits; not how it matches (that is decided per group above). */
function ruleMeaning(rule: MappingRule): unknown {
  return [rule.index, rule.department ?? null, rule.companyPermissions, rule.workspaces];
}
