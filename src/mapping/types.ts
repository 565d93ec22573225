/**
 * Workspaces, teams, permission sets and roles are keyed by name, or `id:<identifier>` when the
 * mapping names them by API identifier (`refKey` in ./file.ts).
 */
export type DesiredTeam = {
  teamName: string;
  teamPermissions: string[];
};

export type DesiredWorkspace = {
  appGroupName: string;
  appGroupPermissions: string[];
  appGroupPermissionSets: string[];
  team: DesiredTeam[];
};

/**
 * The dashboard user the platform should hold for one IdP user: the output of the mapping and
 * the input of the reconcile planner. Permission arrays are sorted and de-duplicated, workspaces
 * and teams sorted by name, so two desired users compare equal exactly when they mean the same.
 */
export type DesiredDashboardUser = {
  userName: string;
  givenName: string;
  familyName: string;
  department: string;
  companyPermissions: string[];
  /** Company-level roles (granular model); absent: none. */
  roles?: string[];
  workspaces: DesiredWorkspace[];
  /**
   * "granular" when the strings are granular ones (the mapping's model, or what the platform
   * answered); absent: legacy, or not told (src/mapping/granular.ts `modelOfUser` reads the strings).
   */
  permissionModel?: "granular";
};
