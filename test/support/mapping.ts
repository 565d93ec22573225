/** The mapping the end-to-end tests use (no vitest import here, so benches can use it too). */
export const TEST_MAPPING = `
department:
  default: engineering
  fromAttribute: true
  translate: { "Finance & Accounting": finance }
rules:
  - group: Platform Admins
    companyPermissions: [admin]
  - group: Marketing
    department: marketing
    workspaces:
      - name: EU Production
        permissions: [basic_access, send_campaigns_canvases]
        teams:
          - name: Lifecycle
            permissions: [basic_access]
  - groupPattern: "^Analysts-"
    workspaces:
      - name: EU Production
        permissions: [export_user_data]
`;

/** TEST_MAPPING with Marketing reduced to basic_access and a company permission added for admins: the draft the admin tests preview and apply. */
export const DRAFT_MAPPING = TEST_MAPPING.replace(
  "permissions: [basic_access, send_campaigns_canvases]",
  "permissions: [basic_access]",
).replace("companyPermissions: [admin]", "companyPermissions: [admin, manage_company_settings]");

/**
 * A granular mapping with a catalogue (issue 36): one group rule, and four entries the IdP may
 * assign as roles or entitlements, one of each type. The SCIM and end-to-end tests of assigned
 * access use it.
 */
/** The workspace and permission set CATALOGUE_MAPPING names, as the emulator's fixtures (test/support/emulator.ts, loadFixtures). */
export const CATALOGUE_FIXTURES = {
  workspaces: [{ name: "Fashion Brands", teams: [] }],
  permissionSets: [{ name: "Marketer", permissions: ["view_campaigns", "edit_campaigns"] }],
};

export const CATALOGUE_MAPPING = `
permissionModel: granular
department: { default: engineering }
rules:
  - group: Marketing
    workspaces:
      - name: EU Production
        permissions: [view_campaigns]
catalogue:
  assignedIn: Okta
  entries:
    - id: marketer-fashion
      displayName: Marketer – Fashion Brands
      type: permissionSet
      workspace: Fashion Brands
      permissionSet: Marketer
    - id: company-auditor
      displayName: Auditor
      type: role
      role: Auditor
    - id: lifecycle-team
      displayName: Lifecycle team
      type: team
      workspace: EU Production
      team: Lifecycle
      permissions: [view_campaigns, view_segments]
    - id: eu-analyst
      displayName: EU analyst
      type: workspacePermissions
      workspace: EU Production
      permissions: [view_campaigns, view_segments]
`;
