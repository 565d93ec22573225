import { describe, expect, it } from "vitest";
import { BadRequestError } from "../../src/errors.js";
import { parseFilter, parsePatchPath, splitAttributeList } from "../../src/scim/filter.js";
import { matchesFilter } from "../../src/scim/filterEval.js";
import { filterToSql } from "../../src/db/idp/filterSql.js";
import { userFilterSql } from "../../src/scim/userCommands.js";
import { prng } from "../support/fuzz.js";

describe("parseFilter", () => {
  it.each([
    ['userName eq "bjensen"', { kind: "compare", path: "userName", op: "eq", value: "bjensen" }],
    ['USERNAME EQ "x"', { kind: "compare", path: "USERNAME", op: "eq", value: "x" }],
    ["title pr", { kind: "present", path: "title" }],
    ["active eq true", { kind: "compare", path: "active", op: "eq", value: true }],
    // A word ends at a bracket or a quote as well as at whitespace.
    ["(active eq true)", { kind: "compare", path: "active", op: "eq", value: true }],
    [
      "emails[primary eq true]",
      { kind: "valuePath", path: "emails", filter: { kind: "compare", path: "primary", op: "eq", value: true } },
    ],
    ['userName eq"x"', { kind: "compare", path: "userName", op: "eq", value: "x" }],
    ["title\tpr", { kind: "present", path: "title" }],
    ["x eq null", { kind: "compare", path: "x", op: "eq", value: null }],
    ["x gt -1.5e3", { kind: "compare", path: "x", op: "gt", value: -1500 }],
    [
      'a eq "1" or b eq "2" and c eq "3"',
      {
        kind: "or",
        left: { kind: "compare", path: "a", op: "eq", value: "1" },
        right: {
          kind: "and",
          left: { kind: "compare", path: "b", op: "eq", value: "2" },
          right: { kind: "compare", path: "c", op: "eq", value: "3" },
        },
      },
    ],
    [
      'not (a eq "1" or b eq "2")',
      {
        kind: "not",
        filter: {
          kind: "or",
          left: { kind: "compare", path: "a", op: "eq", value: "1" },
          right: { kind: "compare", path: "b", op: "eq", value: "2" },
        },
      },
    ],
    [
      'emails[type eq "work" and value co "@x"]',
      {
        kind: "valuePath",
        path: "emails",
        filter: {
          kind: "and",
          left: { kind: "compare", path: "type", op: "eq", value: "work" },
          right: { kind: "compare", path: "value", op: "co", value: "@x" },
        },
      },
    ],
    [
      'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department eq "Sales"',
      {
        kind: "compare",
        path: "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department",
        op: "eq",
        value: "Sales",
      },
    ],
    [
      'displayName eq "quote \\" and paren ) inside"',
      { kind: "compare", path: "displayName", op: "eq", value: 'quote " and paren ) inside' },
    ],
  ])("%s", (input, expected) => {
    expect(parseFilter(input)).toEqual(expected);
  });

  it.each([
    "",
    "userName",
    "userName eq",
    "userName eq bare",
    'userName like "x"',
    '(userName eq "x"',
    'userName eq "x")',
    'not userName eq "x"',
    'emails[type eq "work"',
    '"x" eq userName',
    `${"(".repeat(40)}a pr${")".repeat(40)}`,
    Array.from({ length: 70 }, () => "a pr").join(" and "),
  ])("rejects %j with invalidFilter", (input) => {
    expect(() => parseFilter(input)).toThrowError(expect.objectContaining({ status: 400, scimType: "invalidFilter" }));
  });
});

describe("parsePatchPath", () => {
  it.each([
    ["title", { path: "title" }],
    ["name.givenName", { path: "name.givenName" }],
    [
      'members[value eq "abc"]',
      { path: "members", filter: { kind: "compare", path: "value", op: "eq", value: "abc" } },
    ],
    [
      'emails[type eq "work"].value',
      { path: "emails", filter: { kind: "compare", path: "type", op: "eq", value: "work" }, subAttribute: "value" },
    ],
    [
      "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager",
      { path: "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager" },
    ],
  ])("%s", (input, expected) => {
    expect(parsePatchPath(input)).toEqual(expected);
  });

  it.each(["", "a b", "emails[type eq]", 'emails[type eq "w"]x', 'name.given[type eq "x"]'])(
    "rejects %j with invalidPath",
    (input) => {
      expect(() => parsePatchPath(input)).toThrowError(expect.objectContaining({ scimType: "invalidPath" }));
    },
  );
});

describe("splitAttributeList", () => {
  it.each([
    ["userName,emails", ["userName", "emails"]],
    [" userName , name.givenName ", ["userName", "name.givenName"]],
    ['emails[type eq "a,b"],userName', ['emails[type eq "a,b"]', "userName"]],
  ])("%s", (input, expected) => {
    expect(splitAttributeList(input)).toEqual(expected);
  });
});

describe("matchesFilter (value filters in memory)", () => {
  const email = { value: "Bob@Example.com", type: "work", primary: true };
  it.each([
    ['type eq "WORK"', true],
    ['value co "example"', true],
    ['value sw "bob"', true],
    ['value ew ".COM"', true],
    ['type ne "work"', false],
    ["primary eq true", true],
    ["display pr", false],
    ['not (type eq "home")', true],
    ['type eq "home" or primary eq true', true],
    ["display eq null", true],
  ])("%s → %s", (filter, expected) => {
    expect(matchesFilter(email, parseFilter(filter))).toBe(expected);
  });
});

describe("filterToSql", () => {
  it.each([
    ['userName eq "A@x.com"', "User", "(lower(u.user_name) = lower($1::text))", ["A@x.com"]],
    ['externalId eq "E1"', "User", "(u.external_id = $1::text)", ["E1"]],
    ["active eq false", "User", "(u.active = $1::boolean)", [false]],
    ['id eq "not-a-uuid"', "User", "false", []],
    [
      'id eq "5f0c1a52-0000-4000-8000-000000000000"',
      "User",
      "(u.id = $1::uuid)",
      ["5f0c1a52-0000-4000-8000-000000000000"],
    ],
    [
      'meta.created gt "2020-01-01T00:00:00Z"',
      "User",
      "(u.created_at > $1::timestamptz)",
      ["2020-01-01T00:00:00.000Z"],
    ],
    ['title sw "Eng"', "User", "starts_with(lower((u.resource->>'title')), lower($1::text))", ["Eng"]],
    ['displayName eq "G"', "Group", "(lower(g.display_name) = lower($1::text))", ["G"]],
  ])("%s on %s", (filter, kind, sql, params) => {
    expect(filterToSql(kind as "User" | "Group", parseFilter(filter))).toEqual({ sql, params });
  });

  it("numbers parameters from the offset and never inlines values", () => {
    const { sql, params } = filterToSql(
      "User",
      parseFilter(`userName eq "x'; DROP TABLE idp_users; --" and title co "y"`),
      3,
    );
    expect(sql).not.toContain("DROP");
    expect(sql).toContain("$4");
    expect(sql).toContain("$5");
    expect(params).toEqual(["x'; DROP TABLE idp_users; --", "y"]);
  });

  it("compiles multi-valued and extension attributes", () => {
    expect(filterToSql("User", parseFilter('emails[type eq "work"]')).sql).toContain("jsonb_array_elements");
    expect(
      filterToSql("User", parseFilter('urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department eq "x"'))
        .sql,
    ).toContain("u.department");
    expect(
      filterToSql(
        "User",
        parseFilter('urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager.value eq "m"'),
      ).sql,
    ).toContain("u.resource->'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User'->'manager'");
    expect(filterToSql("Group", parseFilter('members.value eq "5f0c1a52-0000-4000-8000-000000000000"')).sql).toContain(
      "idp_group_members",
    );
  });

  it.each([
    ['nosuch eq "x"'],
    ["active gt true"],
    ["userName eq 5"],
    ['name eq "x"'],
    ['meta.created gt "yesterday"'],
    ['members.nosuch eq "x"'],
  ])("rejects %s", (filter) => {
    expect(() => filterToSql(filter.startsWith("members") ? "Group" : "User", parseFilter(filter))).toThrow(
      BadRequestError,
    );
  });
});

describe("userFilterSql (the compiled `userName eq` of Okta and Entra)", () => {
  const general = (filter: string) => filterToSql("User", parseFilter(filter));
  const answer = (f: () => unknown) => {
    try {
      return { ok: f() };
    } catch (error) {
      return { error: (error as Error).message };
    }
  };

  it("gives the general compiler's condition, or its error, for the IdPs' shape and its near misses", () => {
    const rng = prng(20261126);
    const pieces = [
      "a",
      "Z",
      "@",
      ".",
      " ",
      "é",
      "\\",
      '"',
      '\\"',
      "\\u0041",
      "\t",
      "\u0000",
      "\u001f",
      "%",
      "'",
      "é@x.io",
    ];
    const values = ["", "bjensen@example.com", "x".repeat(4100)];
    for (let i = 0; i < 2000; i++) {
      let value = "";
      for (let n = rng.int(8); n > 0; n--) value += rng.pick(pieces);
      values.push(value);
    }
    const shapes = [
      (v: string) => `userName eq "${v}"`,
      (v: string) => `username eq "${v}"`,
      (v: string) => `userName EQ "${v}"`,
      (v: string) => `userName  eq "${v}"`,
      (v: string) => ` userName eq "${v}"`,
      (v: string) => `userName eq "${v}" `,
      (v: string) => `userName eq "${v}" or userName eq "x"`,
      (v: string) => `userName eq ${v}`,
    ];
    let compiled = 0;
    for (const value of values)
      for (const shape of shapes) {
        const filter = shape(value);
        expect(
          answer(() => userFilterSql(filter)),
          filter.slice(0, 80),
        ).toEqual(answer(() => general(filter)));
        if (/^userName eq "[^"\\\u0000-\u001f]*"$/.test(filter) && filter.length <= 4096) compiled++;
      }
    expect(compiled).toBeGreaterThan(500); // the fast path was taken, not only the fallback
  });

  it("keeps one condition text for every value", () => {
    expect(userFilterSql('userName eq "a@b.c"').sql).toBe(userFilterSql('userName eq "d@e.f"').sql);
    expect(userFilterSql('userName eq "a@b.c"').params).toEqual(["a@b.c"]);
  });
});
