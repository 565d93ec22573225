import { describe, expect, it } from "vitest";
import { normalisePatchRequest, normaliseResource } from "../../src/scim/idpQuirks.js";
import { applyPatch, splitGroupPatch } from "../../src/scim/patchApply.js";
import { parseProjection, project } from "../../src/scim/projection.js";
import { parseListParams } from "../../src/http/scim/params.js";
import { classifyScimError } from "../../src/http/scim/errors.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const base = () => ({
  userName: "a@x.com",
  active: true,
  name: { givenName: "A", familyName: "B" },
  emails: [{ value: "a@x.com", type: "work", primary: true }],
});
const ops = (...Operations: unknown[]) => normalisePatchRequest("User", { Operations });

describe("normalisePatchRequest (IdP dialects)", () => {
  it.each([
    [
      "Entra capitalised op",
      { op: "Replace", path: "active", value: "False" },
      [{ op: "replace", path: "active", value: "False" }],
    ],
    [
      "Okta path-less replace",
      { op: "replace", value: { active: false } },
      [{ op: "replace", path: "active", value: false, lenient: true }],
    ],
    [
      "path-less value with an extension object",
      { op: "add", value: { [ENT]: { department: "D" }, id: "ignored" } },
      [{ op: "add", path: `${ENT}:department`, value: "D", lenient: true }],
    ],
    [
      "a path naming the whole extension",
      { op: "replace", path: ENT, value: { department: "D" } },
      [{ op: "replace", path: `${ENT}:department`, value: "D" }],
    ],
    [
      "empty path is path-less",
      { op: "replace", path: "", value: { title: "T" } },
      [{ op: "replace", path: "title", value: "T", lenient: true }],
    ],
  ])("%s", (_name, operation, expected) => {
    expect(normalisePatchRequest("User", { Operations: [operation] })).toEqual(expected);
  });

  it("accepts a lower-case operations key", () => {
    expect(normalisePatchRequest("User", { operations: [{ op: "remove", path: "title" }] })).toEqual([
      { op: "remove", path: "title", value: undefined },
    ]);
  });
});

describe("applyPatch", () => {
  it.each([
    ['Entra "False" on a boolean', ops({ op: "Replace", path: "active", value: "False" }), { active: false }],
    ["Okta path-less deactivation", ops({ op: "replace", value: { active: false } }), { active: false }],
    [
      "replace a sub-attribute",
      ops({ op: "replace", path: "name.givenName", value: "Z" }),
      { name: { givenName: "Z", familyName: "B" } },
    ],
    [
      "replace a complex value merges",
      ops({ op: "replace", path: "name", value: { givenName: "Z" } }),
      { name: { givenName: "Z", familyName: "B" } },
    ],
    ["remove a sub-attribute", ops({ op: "remove", path: "name.familyName" }), { name: { givenName: "A" } }],
    [
      "value-filter sub-attribute",
      ops({ op: "replace", path: 'emails[type eq "work"].value', value: "n@x.com" }),
      { emails: [{ value: "n@x.com", type: "work", primary: true }] },
    ],
    ["value-filter remove", ops({ op: "remove", path: 'emails[type eq "work"]' }), { emails: [] }],
    [
      "add to a multi-valued attribute de-duplicates",
      ops({
        op: "add",
        path: "emails",
        value: [
          { value: "a@x.com", type: "work", primary: true },
          { value: "h@x.com", type: "home" },
        ],
      }),
      {
        emails: [
          { value: "a@x.com", type: "work", primary: true },
          { value: "h@x.com", type: "home" },
        ],
      },
    ],
    ["remove with a value list", ops({ op: "remove", path: "emails", value: [{ value: "a@x.com" }] }), { emails: [] }],
    [
      "manager as a bare string",
      ops({ op: "Add", path: `${ENT}:manager`, value: "m1" }),
      { [ENT]: { manager: { value: "m1" } } },
    ],
    [
      "path-less unknown attributes are ignored",
      ops({ op: "replace", value: { nosuch: 1, title: "T" } }),
      { title: "T" },
    ],
  ])("%s", (_name, operations, expected) => {
    expect(applyPatch("User", base(), operations)).toMatchObject(expected);
  });

  it('removes the manager with ""', () => {
    const withManager = applyPatch("User", base(), ops({ op: "add", path: `${ENT}:manager`, value: { value: "m1" } }));
    expect(applyPatch("User", withManager, ops({ op: "Replace", path: `${ENT}:manager`, value: "" }))[ENT]).toEqual({});
  });

  it("does not change its input", () => {
    const input = base();
    applyPatch("User", input, ops({ op: "replace", path: "active", value: false }));
    expect(input.active).toBe(true);
  });
});

describe("splitGroupPatch", () => {
  const split = (...Operations: unknown[]) => splitGroupPatch(normalisePatchRequest("Group", { Operations }));
  it.each([
    [
      "add",
      [{ op: "add", path: "members", value: [{ value: "u1", display: "U" }] }],
      [{ kind: "add", members: [{ id: "u1", display: "U" }] }],
    ],
    ["remove by filter", [{ op: "remove", path: 'members[value eq "u1"]' }], [{ kind: "remove", ids: ["u1"] }]],
    [
      "remove by or-filter",
      [{ op: "remove", path: 'members[value eq "u1" or value eq "u2"]' }],
      [{ kind: "remove", ids: ["u1", "u2"] }],
    ],
    [
      "Entra remove by value list",
      [{ op: "Remove", path: "members", value: [{ value: "u1" }, { value: "u2" }] }],
      [{ kind: "remove", ids: ["u1", "u2"] }],
    ],
    ["remove all", [{ op: "remove", path: "members" }], [{ kind: "removeAll" }]],
    ["replace with []", [{ op: "replace", path: "members", value: [] }], [{ kind: "replace", members: [] }]],
    [
      "path-less members",
      [{ op: "add", value: { members: [{ value: "u3" }] } }],
      [{ kind: "add", members: [{ id: "u3", display: undefined }] }],
    ],
  ])("%s", (_name, operations, membership) => {
    expect(split(...operations).membership).toEqual(membership);
  });

  it("keeps Okta's rename beside the member changes", () => {
    const { attributeOps, membership } = split(
      { op: "replace", value: { id: "g1", displayName: "New" } },
      { op: "remove", path: "members", value: [{ value: "u1" }] },
      { op: "add", path: "members", value: [{ value: "u2" }] },
    );
    expect(attributeOps).toEqual([{ op: "replace", path: "displayName", value: "New", lenient: true }]);
    expect(membership.map((m) => m.kind)).toEqual(["remove", "add"]);
  });
});

describe("normaliseResource", () => {
  it("turns Entra strings into booleans and bare managers into objects", () => {
    expect(
      normaliseResource("User", {
        active: "True",
        emails: [{ value: "a", primary: "false" }],
        [ENT]: { manager: "m", department: "D" },
      }),
    ).toEqual({
      active: true,
      emails: [{ value: "a", primary: false }],
      [ENT]: { manager: { value: "m" }, department: "D" },
    });
  });
});

describe("projection", () => {
  const user = {
    schemas: ["s"],
    id: "1",
    userName: "u",
    name: { givenName: "g", familyName: "f" },
    emails: [
      { type: "work", value: "w" },
      { type: "home", value: "h" },
    ],
    meta: { resourceType: "User" },
  };
  it.each([
    ["userName", undefined, { schemas: ["s"], id: "1", userName: "u" }],
    ["name.givenName", undefined, { schemas: ["s"], id: "1", name: { givenName: "g" } }],
    ['emails[type eq "home"]', undefined, { schemas: ["s"], id: "1", emails: [{ type: "home", value: "h" }] }],
    [undefined, "emails,meta,name.familyName", { schemas: ["s"], id: "1", userName: "u", name: { givenName: "g" } }],
  ])("attributes=%s excludedAttributes=%s", (attributes, excluded, expected) => {
    expect(project(user, parseProjection("User", attributes, excluded))).toEqual(expected);
  });
});

describe("parseListParams", () => {
  it.each([
    [{}, { startIndex: 1, count: 100 }],
    [
      { startIndex: "0", count: "-5" },
      { startIndex: 1, count: 0 },
    ],
    [
      { startIndex: "3", count: "5000" },
      { startIndex: 3, count: 1000 },
    ],
    [{ filter: "  " }, { filter: undefined }],
    [{ Filter: 'a eq "b"' }, { filter: 'a eq "b"' }],
    [{ attributes: ["userName", "emails"] }, { attributes: "userName,emails" }],
  ])("%j", (query, expected) => {
    expect(parseListParams(query, 1000)).toMatchObject(expected);
  });
  it.each([[{ startIndex: "x" }], [{ count: "1e3" }], [{ filter: ["a", "b"] }]])("rejects %j", (query) => {
    expect(() => parseListParams(query, 1000)).toThrowError(expect.objectContaining({ status: 400 }));
  });
});

describe("classifyScimError", () => {
  it.each([
    [{ code: "23505" }, 409, "uniqueness"],
    [{ code: "22P05" }, 400, "invalidValue"],
    [{ code: "54000" }, 400, "invalidValue"],
    [{ code: "57P01" }, 503, undefined],
    [{ type: "entity.parse.failed", status: 400 }, 400, "invalidSyntax"],
    [{ type: "entity.too.large", status: 413, limit: 10 }, 413, undefined],
    [{ status: 400, expose: true, message: "incorrect header check" }, 400, "invalidSyntax"],
    [new Error("bug"), 500, undefined],
  ])("%j → %s", (error, status, scimType) => {
    const classified = classifyScimError(error);
    expect({ status: classified.status, scimType: classified.scimType }).toEqual({ status, scimType });
  });
});
