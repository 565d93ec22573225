import { describe, expect, it } from "vitest";
import { parseRoleValues, roleFromProfile } from "../../src/http/admin/auth/samlRoles.js";
import type { Profile } from "@node-saml/passport-saml";

describe("SAML roles", () => {
  const rules = {
    attributes: ["groups"],
    adminValues: parseRoleValues("Admins, scim-admin"),
    viewerValues: parseRoleValues("viewers"),
  };
  const profile = (groups: unknown) => ({ nameID: "a@x", groups }) as unknown as Profile;
  it.each([
    [["viewers", "admins"], "admin"],
    ["VIEWERS", "viewer"],
    [["staff"], undefined],
    [undefined, undefined],
    [42, undefined],
  ])("%j → %s", (groups, role) => {
    expect(roleFromProfile(profile(groups), rules)).toBe(role);
  });
});
