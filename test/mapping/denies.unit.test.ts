import { describe, expect, it } from "vitest";
import { applyDenies, type DeniedGrant } from "../../src/mapping/denies.js";
import type { DesiredDashboardUser } from "../../src/mapping/types.js";

const user: DesiredDashboardUser = {
  userName: "a@example.com",
  givenName: "A",
  familyName: "B",
  department: "engineering",
  companyPermissions: ["admin"],
  workspaces: [
    {
      appGroupName: "EU Production",
      appGroupPermissions: ["basic_access", "send_campaigns_canvases"],
      appGroupPermissionSets: [],
      team: [{ teamName: "Lifecycle", teamPermissions: ["basic_access"] }],
    },
    { appGroupName: "US Production", appGroupPermissions: ["basic_access"], appGroupPermissionSets: [], team: [] },
  ],
};

const deny = (scope: DeniedGrant["scope"], workspace: string | null, permission: string, team: string | null = null) =>
  ({ scope, workspace, team, permission }) as DeniedGrant;

describe("applyDenies", () => {
  it.each([
    ["a company permission", [deny("company", null, "admin")], { companyPermissions: [] }],
    [
      "a workspace permission, keeping the workspace's other grants",
      [deny("workspace", "EU Production", "send_campaigns_canvases")],
      { workspaces: [expect.objectContaining({ appGroupPermissions: ["basic_access"] }), user.workspaces[1]] },
    ],
    [
      "a team permission, dropping the emptied team",
      [deny("team", "EU Production", "basic_access", "Lifecycle")],
      { workspaces: [expect.objectContaining({ team: [] }), user.workspaces[1]] },
    ],
    [
      "a workspace's last grant, dropping the workspace",
      [deny("workspace", "US Production", "basic_access")],
      { workspaces: [user.workspaces[0]] },
    ],
  ])("removes %s", (_what, denies, expected) => {
    const { desired, notGranted } = applyDenies(user, denies);
    expect(desired).toMatchObject(expected);
    expect(notGranted).toEqual([]);
  });

  it("a permission of the same name in another workspace stays", () => {
    const { desired } = applyDenies(user, [deny("workspace", "US Production", "basic_access")]);
    expect(desired!.workspaces[0]!.appGroupPermissions).toContain("basic_access");
  });

  it("names the denies the mapping no longer grants (they end), and leaves the user as mapped", () => {
    const gone = deny("workspace", "EU Production", "export_user_data");
    expect(applyDenies(user, [gone])).toEqual({ desired: user, notGranted: [gone] });
    expect(applyDenies(null, [gone])).toEqual({ desired: null, notGranted: [gone] });
  });
});
