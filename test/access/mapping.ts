/** The access tests' mapping: two rules give EU Production basic_access; Support alone gives US Production. */
export const ACCESS_MAPPING = (marketingPermissions = "basic_access, send_campaigns_canvases") => `
department:
  default: engineering
rules:
  - group: Platform Admins
    description: Platform administrators
    companyPermissions: [admin]
  - group: Marketing
    description: EU marketers
    department: marketing
    workspaces:
      - name: EU Production
        permissions: [${marketingPermissions}]
        teams:
          - name: Lifecycle
            permissions: [basic_access]
  - group: Support
    description: Support agents
    workspaces:
      - name: EU Production
        permissions: [basic_access, view_user_profile]
      - name: US Production
        permissions: [basic_access]
`;
