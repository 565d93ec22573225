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
