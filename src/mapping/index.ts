/** The mapping's public surface: group rules → desired dashboard user (pure). */
export { desiredDashboardUser, type MappingUser } from "./desired.js";
export { matchingRules, type MappingGroup } from "./match.js";
export { affectedByMappingChange } from "./change.js";
