import { describe, expect, it } from "vitest";
import { withoutUnassigned } from "../../src/scim/schemas.js";
import { sortAcrossToSql, sortToSql } from "../../src/db/idp/sortSql.js";

describe("sortToSql (RFC 7644 §3.4.2.3): a fixed ORDER BY key per sortable attribute", () => {
  it.each([
    ["User", "userName", "lower(u.user_name)"],
    ["User", "USERNAME", "lower(u.user_name)"],
    ["User", "urn:ietf:params:scim:schemas:core:2.0:User:userName", "lower(u.user_name)"],
    ["User", "displayName", "lower(u.display_name)"],
    ["User", "externalId", "u.external_id"],
    ["User", "meta.created", "u.created_at"],
    ["User", "meta.lastModified", "u.updated_at"],
    ["Group", "displayName", "lower(g.display_name)"],
    ["Group", "meta.lastModified", "g.updated_at"],
  ] as const)("%s sortBy=%s → %s", (kind, sortBy, key) => {
    expect(sortToSql(kind, { sortBy, sortOrder: "ascending" })).toMatchObject({ key, descending: false });
  });

  it.each([
    ["User", "nickName"],
    ["User", "emails.value"],
    ["User", "u.id; DROP TABLE idp_users"],
    ["Group", "userName"],
  ] as const)("%s sortBy=%s is a 400 invalidValue", (kind, sortBy) => {
    expect(() => sortToSql(kind, { sortBy, sortOrder: "ascending" })).toThrow(
      expect.objectContaining({ status: 400, scimType: "invalidValue" }),
    );
  });

  it("across types, the type without the attribute has no key (sorted as unassigned)", () => {
    expect(sortAcrossToSql({ sortBy: "userName", sortOrder: "descending" })).toEqual({
      User: { key: "lower(u.user_name)", type: "text", descending: true },
      Group: { key: undefined, type: "text", descending: true },
    });
  });
});

describe("withoutUnassigned (RFC 7643 §2.5)", () => {
  it.each([
    [{ a: null, b: [], c: {}, d: "x" }, { d: "x" }],
    [{ emails: [{}, { value: "a" }], name: { givenName: null } }, { emails: [{ value: "a" }] }],
    [
      { active: false, count: 0, text: "" },
      { active: false, count: 0, text: "" },
    ],
    [[], undefined],
  ])("%j → %j", (input, expected) => {
    expect(withoutUnassigned(input)).toEqual(expected);
  });
});
