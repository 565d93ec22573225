import { describe, expect, it } from "vitest";
import type { UnmanagedAccount } from "../../src/db/platform/unmanagedAccountRepository.js";
import { withoutGrant, type AccessSet } from "../../src/reconcile/outsideAccess.js";
import { planUnmanagedRemoval } from "../../src/reconcile/unmanagedRemoval.js";

/** What a campaign's revoke of an item no rule gives becomes (pure): the plan of an account made by hand, a kept grant taken off. */

const NOW = new Date("2026-12-01T10:00:00Z");

const account = (removal: "strip" | "delete" | null): UnmanagedAccount => ({
  accountId: "8d7c4f8e-1111-4a4a-9b9b-000000000001",
  userName: "contractor@example.com",
  state: "confirmed",
  firstSeen: NOW,
  addedBy: "ops-admin@example.com",
  lastEventAt: NOW,
  permissions: {
    companyPermissions: ["manage_team"],
    workspaces: [
      { appGroupName: "EU Production", appGroupPermissions: ["basic_access"], appGroupPermissionSets: [], team: [] },
    ],
  },
  platformId: "p-1",
  lookedUpAt: NOW,
  confirmedAt: NOW,
  alertedAt: NOW,
  profile: { givenName: "Carl", familyName: "Hand", department: "Contractors" },
  removal: removal && {
    removal,
    by: "kate@example.com",
    at: NOW,
    campaignId: null,
    itemId: null,
    comment: "gone",
    doneAt: null,
  },
});

describe("planUnmanagedRemoval", () => {
  it("strips: one PUT of the account with its name and no permissions, nothing kept locally", () => {
    expect(planUnmanagedRemoval(account("strip"), NOW)).toMatchObject({
      action: "strip",
      platformId: "p-1",
      stripped: {
        userName: "contractor@example.com",
        givenName: "Carl",
        familyName: "Hand",
        department: "Contractors",
        companyPermissions: [],
        workspaces: [],
      },
      deleteAfter: null,
      forget: true,
    });
  });

  it("deletes: the deprovision the executor holds for an admin", () => {
    expect(planUnmanagedRemoval(account("delete"), NOW)).toMatchObject({ action: "deprovision", platformId: "p-1" });
  });

  it("does nothing without a decision", () => {
    expect(planUnmanagedRemoval(account(null), NOW).action).toBe("none");
  });
});

describe("withoutGrant", () => {
  const set: AccessSet = {
    companyPermissions: ["admin", "manage_team"],
    roles: ["Auditor"],
    workspaces: [
      {
        appGroupName: "EU",
        appGroupPermissions: ["export_user_data"],
        appGroupPermissionSets: [],
        team: [{ teamName: "Fashion", teamPermissions: ["view_segments"] }],
      },
    ],
  };
  const cases: [string, Parameters<typeof withoutGrant>[1], AccessSet][] = [
    [
      "a company permission",
      { scope: "company", workspace: null, team: null, permission: "admin" },
      { ...set, companyPermissions: ["manage_team"] },
    ],
    ["a role", { scope: "role", workspace: null, team: null, permission: "Auditor" }, { ...set, roles: [] }],
    [
      "a workspace's string (the workspace stays for its team)",
      { scope: "workspace", workspace: "EU", team: null, permission: "export_user_data" },
      { ...set, workspaces: [{ ...set.workspaces[0]!, appGroupPermissions: [] }] },
    ],
    [
      "a team's string (the team goes, and the workspace keeps its own)",
      { scope: "team", workspace: "EU", team: "Fashion", permission: "view_segments" },
      { ...set, workspaces: [{ ...set.workspaces[0]!, team: [] }] },
    ],
    [
      "a string of another workspace: nothing",
      { scope: "workspace", workspace: "US", team: null, permission: "export_user_data" },
      set,
    ],
  ];
  it.each(cases)("takes off %s", (_name, grant, expected) => {
    expect(withoutGrant(set, grant)).toEqual(expected);
  });
});
