const ADMINS = (description: string) => `
  - group: Platform Admins
    description: ${description}
    companyPermissions: [admin]`;

/**
 * The access tests' mapping: two rules give EU Production basic_access; Support alone gives US Production.
 * `adminsMoved`: the administrators' rule renamed and moved to the end of the file (line 24); three comment
 * lines take its place, so the other rules keep their lines.
 */
export const ACCESS_MAPPING = (marketingPermissions = "basic_access, send_campaigns_canvases", adminsMoved = false) => `
${adminsMoved ? "# The administrators' rule was renamed\n# and moved to the end of the file.\n#\n" : ""}department:
  default: engineering
rules:${adminsMoved ? "" : ADMINS("Platform administrators")}
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
        permissions: [basic_access]${adminsMoved ? ADMINS("Company administrators") : ""}
`;
