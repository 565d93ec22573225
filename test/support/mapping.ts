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
