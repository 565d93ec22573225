/** The mapping's public surface: group rules → desired dashboard user (pure). */
export { desiredDashboardUser, resolveDepartment, unionPermissions, type MappingUser } from "./desired.js";
export { matchingRules, ruleMatchesGroup, type MappingGroup, type MatchReason, type RuleMatch } from "./match.js";
export { affectedByMappingChange } from "./change.js";
export type { DesiredDashboardUser, DesiredTeam, DesiredWorkspace } from "./types.js";
