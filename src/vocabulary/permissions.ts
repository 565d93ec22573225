/**
 * The platform's two permission models, as its public documentation states them
 * (`shared/platform-granular.md`): the legacy SCIM strings, the granular ones, and the published
 * table from one to the other. Facts only: where the platform publishes a display name but no
 * SCIM string, the entry says so (`{ display }`) and nothing here invents the string. The
 * connector asks the mapping file's `vocabulary.equivalents` for those; the emulator, which must
 * answer something, makes its own (see src/emulator/dashboard/permissionModel.ts).
 */

/** One granular permission a legacy string becomes: its SCIM string, or only its display name when none is published. */
export type GranularEquivalent = { scim: string } | { display: string };

/** The granular equivalent of `basic_access`: 43 SCIM strings, in the documentation's order. */
export const BASIC_ACCESS_GRANULAR = [
  "view_campaigns",
  "edit_campaigns",
  "archive_campaigns",
  "view_canvases",
  "edit_canvases",
  "archive_canvases",
  "view_frequency_caps",
  "edit_frequency_caps",
  "view_message_prioritization",
  "edit_message_prioritization",
  "view_content_blocks",
  "view_feature_flags",
  "edit_feature_flags",
  "archive_feature_flags",
  "view_segments",
  "edit_segments",
  "edit_global_control_group",
  "view_iam_templates",
  "edit_iam_templates",
  "archive_iam_templates",
  "view_email_templates",
  "edit_email_templates",
  "archive_email_templates",
  "view_webhook_templates",
  "edit_webhook_templates",
  "archive_webhook_templates",
  "view_link_templates",
  "edit_link_templates",
  "view_media_library_assets",
  "view_locations",
  "edit_locations",
  "archive_locations",
  "view_promotion_codes",
  "edit_promotion_codes",
  "export_promotion_codes",
  "view_preference_centers",
  "edit_preference_centers",
  "edit_reports",
  "view_banner_templates",
  "view_multi_language_settings",
  "use_operator",
  "view_decisioning_studio_agents",
  "view_decisioning_studio_conversion_event",
] as const;

const scim = (...names: string[]): GranularEquivalent[] => names.map((name) => ({ scim: name }));
const display = (name: string): GranularEquivalent => ({ display: name });

/**
 * Legacy workspace string → its granular equivalents (the published table). `null`: the legacy
 * string is not in the published table (`publish_cards`, `manage_approval_settings`).
 */
export const LEGACY_TO_GRANULAR: Readonly<Record<string, readonly GranularEquivalent[] | null>> = {
  admin: scim("admin"),
  basic_access: scim(...BASIC_ACCESS_GRANULAR),
  dev_console: [
    ...scim("view_api_keys", "edit_api_keys", "view_internal_user_groups", "edit_internal_user_groups"),
    display("Delete Internal Groups"),
    ...scim(
      "view_message_activity_log",
      "view_event_user_log",
      "view_api_identifiers",
      "view_api_usage_dashboard",
      "view_api_limits",
      "view_api_usage_alerts",
      "edit_api_usage_alerts",
      "view_sdk_debugger",
      "edit_sdk_debugger",
    ),
  ],
  approve_deny_campaigns: [display("Approve Campaigns"), display("Approve Canvases")],
  send_campaigns_canvases: scim("launch_campaigns", "launch_canvases"),
  export_user_data: [display("Export User Data")],
  import_update_user_data: scim("view_import_users", "import_users", "edit_user_data"),
  edit_segments: [display("Archive Segments")],
  launch_content_blocks: [
    display("Edit Content Blocks"),
    display("Archive Content Blocks"),
    ...scim("launch_content_blocks"),
  ],
  manage_media_library: scim("edit_media_library_assets", "delete_media_library_asset"),
  manage_apps: [
    display("View App Settings"),
    ...scim("edit_app_settings"),
    display("View Push TTL"),
    display("Edit Push TTL"),
    display("Edit Banner Templates"),
    display("Archive Banner Templates"),
  ],
  manage_catalogs_dashboard_permission: scim("view_catalogs", "edit_catalogs", "export_catalogs", "delete_catalogs"),
  manage_dashboard_users: scim("edit_dashboard_users"),
  manage_email_settings: scim("view_email_settings", "edit_email_settings"),
  manage_events_attributes_purchases: scim(
    "view_custom_attributes",
    "edit_custom_attributes",
    "blocklist_custom_attributes",
    "delete_custom_attributes",
    "export_custom_attributes",
    "view_custom_events",
    "edit_custom_events",
    "blocklist_custom_events",
    "delete_custom_events",
    "export_custom_events",
    "edit_custom_event_property_segmentation",
    "view_products",
    "edit_products",
    "blocklist_products",
    "edit_purchase_property_segmentation",
  ),
  manage_external_integrations: [display("Edit Technology Partners"), ...scim("edit_cloud_data_ingestion")],
  manage_subscription_groups: [display("Edit Subscriptions")],
  manage_tags: scim("view_tags", "edit_tags", "delete_tags"),
  manage_teams: scim("view_teams", "edit_teams", "archive_teams"),
  view_billing_details: scim("view_billing_details"),
  view_pii: scim("view_pii"),
  view_user_profile: scim("view_user_profile"),
  view_usage_data: scim("view_usage_data"),
  publish_cards: null,
  manage_approval_settings: null,
};

/** The legacy workspace strings (`platform-api.md` and the published legacy list). */
const LEGACY_WORKSPACE_PERMISSIONS: readonly string[] = Object.keys(LEGACY_TO_GRANULAR);

/** The legacy team strings. */
const LEGACY_TEAM_PERMISSIONS: readonly string[] = [
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
];

/** Company strings: the same three in both models, with the same meaning. */
const COMPANY_PERMISSIONS: readonly string[] = ["admin", "manage_company_settings", "add_remove_app_groups"];

/** Every granular workspace SCIM string the documentation publishes. */
export const GRANULAR_WORKSPACE_PERMISSIONS: readonly string[] = [
  ...new Set([
    ...Object.values(LEGACY_TO_GRANULAR).flatMap((equivalents) =>
      (equivalents ?? []).flatMap((e) => ("scim" in e ? [e.scim] : [])),
    ),
    "view_push_settings",
    "edit_push_settings",
  ]),
];

/** The granular team strings: `basic_access`'s 43 with reports, launches and dashboard users added. */
export const GRANULAR_TEAM_PERMISSIONS: readonly string[] = [
  ...BASIC_ACCESS_GRANULAR,
  "view_reports",
  "create_reports",
  "launch_campaigns",
  "launch_canvases",
  "edit_dashboard_users",
];

const granularStrings = new Set([...GRANULAR_WORKSPACE_PERMISSIONS, ...GRANULAR_TEAM_PERMISSIONS]);

/**
 * True for a legacy string that is not also a granular one (`basic_access`, `dev_console`, …).
 * `admin`, `view_pii`, `edit_segments`, `launch_content_blocks` and the like are spelled the
 * same in both models and are not counted: their presence says nothing of the model.
 */
export function isLegacyOnly(permission: string): boolean {
  return Object.hasOwn(LEGACY_TO_GRANULAR, permission) && !granularStrings.has(permission);
}

/** True for a published granular string that is not also a legacy one. */
export function isGranularOnly(permission: string): boolean {
  return granularStrings.has(permission) && !Object.hasOwn(LEGACY_TO_GRANULAR, permission);
}

/** The legacy strings whose meaning changes between the models although the spelling does not. */
export const SPELLED_ALIKE_MEANING_DIFFERS: readonly string[] = Object.entries(LEGACY_TO_GRANULAR)
  .filter(
    ([legacy, equivalents]) =>
      granularStrings.has(legacy) &&
      !(equivalents?.length === 1 && "scim" in equivalents[0]! && equivalents[0].scim === legacy),
  )
  .map(([legacy]) => legacy);

/**
 * The permission names the mapping file is checked against unless it declares its own
 * (`vocabulary:`) or turns the check off (`vocabulary: { enabled: false }`). A typo such as
 * `send_campaign` would otherwise reach the platform as a permission nobody has, silently.
 * These are the names the platform publishes for its SCIM permissions object, per model
 * (above): a granular file is checked against the granular strings, a legacy
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
