/**
 * The dashboard user the platform should hold for one IdP user: the output of the mapping and
 * the input of the reconcile planner. Permission arrays are sorted and de-duplicated, workspaces
 * and teams sorted by name, so two desired users compare equal exactly when they mean the same.
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

export type DesiredDashboardUser = {
  userName: string;
  givenName: string;
  familyName: string;
  department: string;
  companyPermissions: string[];
  workspaces: DesiredWorkspace[];
};
