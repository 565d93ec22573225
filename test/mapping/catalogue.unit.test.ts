import { describe, expect, it } from "vitest";
import { MappingError, parseMapping } from "../../src/mapping/file.js";
import { desiredDashboardUser } from "../../src/mapping/desired.js";
import { explainGrants } from "../../src/mapping/reasons.js";
import { changedCatalogueEntries, changedCatalogueIds } from "../../src/mapping/catalogue.js";
import { CATALOGUE_MAPPING } from "../support/mapping.js";

/** The mapping's catalogue (issue 36): validated by `mapping check`, compiled to grants that union with the rules'. */

function problemsOf(text: string): string[] {
  try {
    parseMapping(text, "m.yaml");
  } catch (error) {
    if (error instanceof MappingError) return error.problems;
    throw error;
  }
  throw new Error("expected the mapping to be rejected");
}

const mapping = parseMapping(CATALOGUE_MAPPING, "m.yaml");
const user = (assigned: { attribute: "roles" | "entitlements"; value: string }[], active = true) => ({
  userName: "alice@example.com",
  active,
  givenName: "Alice",
  familyName: "A",
  assigned,
});

describe("the catalogue in the mapping file", () => {
  it("compiles each entry with its id, name, type and line", () => {
    expect(mapping.catalogue.assignedIn).toBe("Okta");
    expect(mapping.catalogue.entries.map((e) => [e.id, e.displayName, e.type, e.line])).toEqual([
      ["marketer-fashion", "Marketer – Fashion Brands", "permissionSet", 12],
      ["company-auditor", "Auditor", "role", 17],
      ["lifecycle-team", "Lifecycle team", "team", 21],
      ["eu-analyst", "EU analyst", "workspacePermissions", 27],
    ]);
  });

  it("refuses duplicate ids (without case), unknown keys, unknown types and permissions outside the vocabulary", () => {
    const bad = CATALOGUE_MAPPING.replace("id: company-auditor", "id: Marketer-Fashion")
      .replace("role: Auditor", "role: Auditor\n      permisions: [x]")
      .replace("type: workspacePermissions", "type: bundle")
      .replace(
        "permissions: [view_campaigns, view_segments]\n    - id: eu",
        "permissions: [view_campaings]\n    - id: eu",
      );
    const problems = problemsOf(bad);
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/catalogue id 'Marketer-Fashion' is already used by entry 1/),
        expect.stringMatching(/unknown key 'permisions'.*did you mean 'permissions'/),
        expect.stringMatching(/catalogue\.entries\[3\]|entries.*type/),
        expect.stringMatching(/unknown team permission 'view_campaings'.*did you mean 'view_campaigns'/),
      ]),
    );
  });

  it("an assigned entry grants its access, unioned with the group rules; a user with only an assignment gets an account", () => {
    const both = desiredDashboardUser(
      user([
        { attribute: "entitlements", value: "marketer-fashion" },
        { attribute: "roles", value: "company-auditor" },
        { attribute: "entitlements", value: "lifecycle-team" },
      ]),
      [{ displayName: "Marketing" }],
      mapping,
    );
    expect(both).toMatchObject({
      roles: ["Auditor"],
      workspaces: [
        { appGroupName: "EU Production", appGroupPermissions: ["view_campaigns"], appGroupPermissionSets: [] },
        { appGroupName: "Fashion Brands", appGroupPermissions: [], appGroupPermissionSets: ["Marketer"] },
      ],
    });
    expect(both!.workspaces[0]!.team).toEqual([
      { teamName: "Lifecycle", teamPermissions: ["view_campaigns", "view_segments"] },
    ]);
    const onlyAssigned = desiredDashboardUser(user([{ attribute: "roles", value: "EU-ANALYST" }]), [], mapping);
    expect(onlyAssigned?.workspaces).toEqual([
      {
        appGroupName: "EU Production",
        appGroupPermissions: ["view_campaigns", "view_segments"],
        appGroupPermissionSets: [],
        team: [],
      },
    ]);
    expect(desiredDashboardUser(user([{ attribute: "roles", value: "no-such" }]), [], mapping)).toBeNull();
    expect(desiredDashboardUser(user([{ attribute: "roles", value: "eu-analyst" }], false), [], mapping)).toBeNull();
  });

  it("names the assignment as the reason of what it grants: 'assigned role … in Okta'", () => {
    const assigned = [
      { attribute: "entitlements" as const, value: "marketer-fashion" },
      { attribute: "roles" as const, value: "company-auditor" },
    ];
    const desired = desiredDashboardUser(user(assigned), [], mapping)!;
    const grants = explainGrants(desired, [], mapping, null, assigned);
    const set = grants.find((g) => g.scope === "permissionSet")!;
    expect(set.permission).toBe("Marketer");
    expect(set.reasons).toEqual([
      expect.objectContaining({
        groups: [],
        assigned: expect.objectContaining({ id: "marketer-fashion", attributes: ["entitlements"], assignedIn: "Okta" }),
      }),
    ]);
    const role = grants.find((g) => g.scope === "role")!;
    expect(role.reasons[0]).toMatchObject({ assigned: { displayName: "Auditor", attributes: ["roles"] } });
  });

  it("a catalogue change names the ids whose grants changed, not those only renamed", () => {
    const renamed = parseMapping(CATALOGUE_MAPPING.replace("displayName: Auditor", "displayName: Auditors"), "m.yaml");
    expect(changedCatalogueIds(mapping.catalogue, renamed.catalogue)).toEqual([]);
    const regranted = parseMapping(
      CATALOGUE_MAPPING.replace("permissionSet: Marketer", "permissionSet: Marketer plus").replace(
        /    - id: eu-analyst[\s\S]*$/,
        "",
      ),
      "m.yaml",
    );
    expect(changedCatalogueIds(mapping.catalogue, regranted.catalogue)).toEqual(["eu-analyst", "marketer-fashion"]);
    // The log names them: a changed entry by the new file's name and line, a removed one by the old file's.
    const lineIn = (text: string, id: string) => text.split("\n").findIndex((l) => l.includes(`id: ${id}`)) + 1;
    expect(changedCatalogueEntries(mapping.catalogue, regranted.catalogue)).toEqual([
      {
        id: "marketer-fashion",
        line: lineIn(CATALOGUE_MAPPING, "marketer-fashion"),
        name: "Marketer – Fashion Brands",
      },
      { id: "eu-analyst", line: lineIn(CATALOGUE_MAPPING, "eu-analyst"), name: "EU analyst", removed: true },
    ]);
    expect(changedCatalogueEntries(mapping.catalogue, renamed.catalogue)).toEqual([]);
  });
});
