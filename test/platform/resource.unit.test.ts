import { describe, expect, it } from "vitest";
import type { DesiredDashboardUser } from "../../src/mapping/types.js";
import { fromPlatformResource, toPlatformResource, userNameFilter } from "../../src/platform/scim.js";
import { readPlatformList, readPlatformUser, type PlatformUserResource } from "../../src/platform/types.js";

const desired: DesiredDashboardUser = {
  userName: "ada@example.com",
  givenName: "Ada",
  familyName: "Lovelace",
  department: "engineering",
  companyPermissions: ["admin"],
  workspaces: [
    {
      appGroupName: "A",
      appGroupPermissions: ["basic_access"],
      appGroupPermissionSets: ["Read only"],
      team: [{ teamName: "T", teamPermissions: ["basic_access"] }],
    },
    { appGroupName: "B", appGroupPermissions: ["admin"], appGroupPermissionSets: [], team: [] },
  ],
};

const resource = (
  permissions: PlatformUserResource["permissions"],
  extra: Partial<PlatformUserResource> = {},
): PlatformUserResource => ({
  schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
  id: "u1",
  userName: "ada@example.com",
  name: { givenName: "Ada", familyName: "Lovelace" },
  department: "engineering",
  lastSignInAt: "2026-01-01T00:00:00Z",
  permissions,
  ...extra,
});

describe("toPlatformResource", () => {
  it("builds the complete resource, leaving out empty permission sets and teams", () => {
    expect(toPlatformResource(desired)).toEqual({
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
      userName: "ada@example.com",
      name: { givenName: "Ada", familyName: "Lovelace" },
      department: "engineering",
      permissions: {
        companyPermissions: ["admin"],
        appGroup: [
          {
            appGroupName: "A",
            appGroupPermissions: ["basic_access"],
            appGroupPermissionSets: [{ appGroupPermissionSetName: "Read only" }],
            team: [{ teamName: "T", teamPermissions: ["basic_access"] }],
          },
          { appGroupName: "B", appGroupPermissions: ["admin"] },
        ],
      },
    });
  });
});

describe("fromPlatformResource: the comparable desired shape", () => {
  const cases: {
    name: string;
    permissions: PlatformUserResource["permissions"];
    expected: DesiredDashboardUser["workspaces"];
    company?: string[];
  }[] = [
    {
      name: "ignores response-only ids and sorts",
      permissions: {
        companyPermissions: ["admin"],
        appGroup: [
          { appGroupId: "w2", appGroupName: "B", appGroupPermissions: ["admin"], team: [] },
          {
            appGroupId: "w1",
            appGroupName: "A",
            appGroupPermissions: ["basic_access"],
            appGroupPermissionSets: [{ appGroupPermissionSetName: "Read only" }],
            team: [{ teamId: "t1", teamName: "T", teamPermissions: ["basic_access"] }],
          },
        ],
      },
      expected: desired.workspaces,
    },
    {
      name: "merges workspaces and teams of the same name, de-duplicating permissions",
      permissions: {
        companyPermissions: ["b", "a", "b"],
        appGroup: [
          { appGroupName: "A", appGroupPermissions: ["y", "x"], team: [{ teamName: "T", teamPermissions: ["p"] }] },
          { appGroupName: "A", appGroupPermissions: ["x"], team: [{ teamName: "T", teamPermissions: ["q", "p"] }] },
        ],
      },
      company: ["a", "b"],
      expected: [
        {
          appGroupName: "A",
          appGroupPermissions: ["x", "y"],
          appGroupPermissionSets: [],
          team: [{ teamName: "T", teamPermissions: ["p", "q"] }],
        },
      ],
    },
    {
      name: "drops workspaces that grant nothing",
      permissions: { companyPermissions: [], appGroup: [{ appGroupName: "Empty", appGroupPermissions: [], team: [] }] },
      company: [],
      expected: [],
    },
  ];
  it.each(cases)("$name", ({ permissions, expected, company }) => {
    const user = fromPlatformResource(resource(permissions));
    expect(user.workspaces).toEqual(expected);
    expect(user.companyPermissions).toEqual(company ?? ["admin"]);
  });

  it("round-trips desired → resource → desired", () => {
    expect(fromPlatformResource(toPlatformResource(desired))).toEqual(desired);
  });
});

describe("reading platform responses", () => {
  it("reads a resource leniently: missing arrays are empty, unknown fields ignored", () => {
    const read = readPlatformUser({
      id: "u1",
      userName: "a@x.com",
      name: { givenName: "A", familyName: "B" },
      department: "pm",
      permissions: { appGroup: [{ appGroupName: "W" }] },
      extra: 1,
    });
    expect(read).toMatchObject({
      id: "u1",
      permissions: { companyPermissions: [], appGroup: [{ appGroupName: "W", appGroupPermissions: [] }] },
    });
  });

  it.each([[null], ["text"], [{ userName: "a@x.com" }], [{ id: "", userName: "a@x.com" }]])(
    "rejects %j (no id or userName)",
    (body) => {
      expect(readPlatformUser(body)).toBeUndefined();
    },
  );

  it("reads a ListResponse, skipping unreadable entries", () => {
    expect(
      readPlatformList({ Resources: [{ id: "1", userName: "a@x.com" }, { nope: true }] }).map((r) => r.id),
    ).toEqual(["1"]);
    expect(readPlatformList({})).toEqual([]);
  });

  it("quotes the filter value so a quote in an email cannot break out", () => {
    expect(userNameFilter('a"b@x.com')).toBe('userName eq "a\\"b@x.com"');
  });
});
