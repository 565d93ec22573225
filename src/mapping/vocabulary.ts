/**
 * The permission names the mapping file is checked against unless it declares its own
 * (`vocabulary:`) or turns the check off (`vocabulary: { enabled: false }`). A typo such as
 * `send_campaign` would otherwise reach the platform as a permission nobody has, silently.
 * These are the names the platform publishes for its SCIM permissions object; the platform's
 * own document shows a subset (admin, manage_company_settings, basic_access,
 * send_campaigns_canvases, export_user_data).
 */

const DEFAULT_COMPANY_PERMISSIONS = ["admin", "manage_company_settings", "add_remove_app_groups"] as const;

const DEFAULT_WORKSPACE_PERMISSIONS = [
  "admin",
  "basic_access",
  "approve_deny_campaigns",
  "send_campaigns_canvases",
  "publish_cards",
  "edit_segments",
  "export_user_data",
  "view_pii",
  "view_user_profile",
  "manage_dashboard_users",
  "manage_media_library",
  "view_usage_data",
  "import_update_user_data",
  "view_billing_details",
  "dev_console",
  "launch_content_blocks",
  "manage_external_integrations",
  "manage_apps",
  "manage_teams",
  "manage_events_attributes_purchases",
  "manage_tags",
  "manage_email_settings",
  "manage_subscription_groups",
  "manage_approval_settings",
  "manage_catalogs_dashboard_permission",
] as const;

const DEFAULT_TEAM_PERMISSIONS = [
  "admin",
  "basic_access",
  "approve_deny_campaigns",
  "send_campaigns_canvases",
  "publish_cards",
  "edit_segments",
  "export_user_data",
  "view_user_profile",
  "manage_dashboard_users",
  "manage_media_library",
] as const;

export type MappingVocabulary = {
  companyPermissions: readonly string[];
  workspacePermissions: readonly string[];
  teamPermissions: readonly string[];
};

export const DEFAULT_VOCABULARY: MappingVocabulary = {
  companyPermissions: DEFAULT_COMPANY_PERMISSIONS,
  workspacePermissions: DEFAULT_WORKSPACE_PERMISSIONS,
  teamPermissions: DEFAULT_TEAM_PERMISSIONS,
};
