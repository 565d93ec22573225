import {
  COMPANY_PERMISSIONS,
  GRANULAR_TEAM_PERMISSIONS,
  GRANULAR_WORKSPACE_PERMISSIONS,
  LEGACY_TEAM_PERMISSIONS,
  LEGACY_WORKSPACE_PERMISSIONS,
} from "./publishedPermissions.js";

/**
 * The permission names the mapping file is checked against unless it declares its own
 * (`vocabulary:`) or turns the check off (`vocabulary: { enabled: false }`). A typo such as
 * `send_campaign` would otherwise reach the platform as a permission nobody has, silently.
 * These are the names the platform publishes for its SCIM permissions object, per model
 * (src/mapping/publishedPermissions.ts): a granular file is checked against the granular strings, a legacy
 * file against both (the platform accepts granular strings from a migrated company, and legacy
 * ones until December 2026, each with a warning at load).
 */

export type MappingVocabulary = {
  companyPermissions: readonly string[];
  workspacePermissions: readonly string[];
  teamPermissions: readonly string[];
};

export type PermissionModel = "legacy" | "granular";

const GRANULAR_VOCABULARY: MappingVocabulary = {
  companyPermissions: COMPANY_PERMISSIONS,
  workspacePermissions: GRANULAR_WORKSPACE_PERMISSIONS,
  teamPermissions: GRANULAR_TEAM_PERMISSIONS,
};

const LEGACY_VOCABULARY: MappingVocabulary = {
  companyPermissions: COMPANY_PERMISSIONS,
  workspacePermissions: [...new Set([...LEGACY_WORKSPACE_PERMISSIONS, ...GRANULAR_WORKSPACE_PERMISSIONS])],
  teamPermissions: [...new Set([...LEGACY_TEAM_PERMISSIONS, ...GRANULAR_TEAM_PERMISSIONS])],
};

export function defaultVocabulary(model: PermissionModel): MappingVocabulary {
  return model === "granular" ? GRANULAR_VOCABULARY : LEGACY_VOCABULARY;
}
