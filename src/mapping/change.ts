import type { Mapping, MappingRule } from "./compiled.js";
import { SPELLED_ALIKE_MEANING_DIFFERS } from "../vocabulary/permissions.js";
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
  before: Pick<Mapping, "rules" | "department"> & Partial<Pick<Mapping, "permissionModel" | "equivalents">>,
  after: Pick<Mapping, "rules" | "department"> & Partial<Pick<Mapping, "permissionModel" | "equivalents">>,
  groups: readonly G[],
): MappingChangeImpact<G> {
  if (JSON.stringify(before.department) !== JSON.stringify(after.department)) return { all: true };
  // The equivalents change what every legacy string means (the model matters only to the strings
  // spelled alike in both models: ruleMeaning counts it for the rules that use one).
  if (JSON.stringify(before.equivalents ?? {}) !== JSON.stringify(after.equivalents ?? {})) return { all: true };
  const signature = (mapping: Pick<Mapping, "rules"> & Partial<Pick<Mapping, "permissionModel">>, group: G) =>
    JSON.stringify(
      mapping.rules
        .filter((rule) => ruleMatchesGroup(rule, group) !== undefined)
        .map((rule) => ruleMeaning(rule, mapping.permissionModel)),
    );
  return { all: false, groups: groups.filter((g) => signature(before, g) !== signature(after, g)) };
}

/** What a rule grants and where it sits; not how it matches (that is decided per group above). */
function ruleMeaning(rule: MappingRule, model: Mapping["permissionModel"] | undefined): unknown {
  const alike = rule.workspaces.some((ws) =>
    [...ws.permissions, ...ws.teams.flatMap((t) => t.permissions)].some((p) =>
      SPELLED_ALIKE_MEANING_DIFFERS.includes(p),
    ),
  );
  return [
    rule.index,
    rule.department ?? null,
    rule.companyPermissions,
    rule.roles ?? [],
    rule.workspaces,
    alike ? model : null,
  ];
}

/** A rule as the log names it: its description, else what it matches. */
function ruleLogName(rule: MappingRule): string {
  if (rule.description?.trim()) return rule.description.trim();
  if (rule.groups.length) return `group ${rule.groups.join(", ")}`;
  if (rule.groupExternalId) return `group externalId ${rule.groupExternalId}`;
  return rule.groupPattern ? `groups matching ${rule.groupPattern.source}` : `rule ${rule.index + 1}`;
}

/** What a rule matches and grants, without where it sits in the file. */
const ruleContent = (rule: MappingRule) =>
  JSON.stringify([
    rule.groups,
    rule.groupExternalId ?? null,
    rule.groupPattern?.source ?? null,
    rule.department ?? null,
    rule.companyPermissions,
    rule.roles ?? [],
    rule.workspaces,
  ]);

/**
 * The rules a reload added or changed (by the new file's lines) and removed (by the old file's),
 * for the log's "mapping change: rule …, line …". A rule that only moved is not listed.
 */
export function changedRules(
  before: Pick<Mapping, "rules"> | undefined,
  after: Pick<Mapping, "rules">,
): { line: number; name: string; removed?: true }[] {
  if (!before) return [];
  const old = new Set(before.rules.map(ruleContent));
  const current = new Set(after.rules.map(ruleContent));
  const changed = after.rules
    .filter((r) => !old.has(ruleContent(r)))
    .map((r) => ({ line: r.line, name: ruleLogName(r) }));
  // A rule edited in place keeps its name: it is listed once, as changed, not also as removed.
  const names = new Set(changed.map((r) => r.name));
  const removed = before.rules.filter((r) => !current.has(ruleContent(r)) && !names.has(ruleLogName(r)));
  return [...changed, ...removed.map((r) => ({ line: r.line, name: ruleLogName(r), removed: true as const }))];
}
