import { describe, expect, it } from "vitest";
import { AppError } from "../../src/errors.js";
import {
  ENTERPRISE_SCHEMA,
  GROUP_SCHEMA,
  USER_SCHEMA,
  coerceResource,
  coerceWithScimmy,
  fastCoerceResource,
  withoutUnassigned,
  type ResourceKind,
} from "../../src/scim/schemas.js";
import { entraUser, groupBody, oktaUser } from "../support/scimRequests.js";
import { containers, mutateJson, nastyString, prng, type Rng } from "../support/fuzz.js";

/**
 * The fast path in front of scimmy (src/scim/fastCoerce.ts) against scimmy itself: for every body
 * it either leaves the decision to scimmy or gives exactly scimmy's output (values, keys, key order),
 * and coerceResource answers as scimmy alone would, errors included.
 */

type Body = Record<string, unknown>;
const ENT = ENTERPRISE_SCHEMA;

const CORPUS: { name: string; kind: ResourceKind; body: Body }[] = [
  { name: "Okta user", kind: "User", body: oktaUser("ada@example.com") },
  { name: "Entra user", kind: "User", body: entraUser("grace@example.com") },
  {
    name: "Entra user, full",
    kind: "User",
    body: {
      schemas: [USER_SCHEMA, ENT],
      externalId: "0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef",
      userName: "Test_User_ab6490ee@contoso.com",
      active: true,
      addresses: [
        { country: "Bermuda", formatted: "9132 Jennifer Way", locality: "West Mercedes", postalCode: "99265" },
        { country: null, formatted: "18522 Lisa Unions", locality: null, type: "other", primary: false },
      ],
      displayName: "Kimberly Baker",
      emails: [
        { type: "work", primary: true, value: "kim@contoso.com" },
        { type: "home", primary: false, value: "kim@home.example" },
      ],
      meta: { resourceType: "User" },
      name: { formatted: "Kimberly Baker", familyName: "Baker", givenName: "Kimberly", middleName: "J" },
      nickName: "Kim",
      phoneNumbers: [
        { type: "work", value: "+1 555 0100" },
        { type: "mobile", value: "+1 555 0101" },
        { type: "fax", value: "+1 555 0102" },
      ],
      preferredLanguage: "en-US",
      roles: [],
      title: "Site engineer",
      userType: "Employee",
      [ENT]: {
        employeeNumber: "701984",
        department: "Tour Operations",
        costCenter: "4130",
        organization: "Universal Studios",
        division: "Theme Park",
        manager: { value: "mgr-7", displayName: "Boss" },
      },
    },
  },
  {
    name: "Okta user with the enterprise extension",
    kind: "User",
    body: {
      ...oktaUser("linus@example.com"),
      schemas: [USER_SCHEMA, ENT],
      title: "Director",
      timezone: "America/Los_Angeles",
      locale: "en-US",
      [ENT]: { organization: "Acme", department: "R&D", manager: { displayName: "Boss", value: "00u2" } },
    },
  },
  {
    name: "stored resource (a PATCH or PUT rewrites it)",
    kind: "User",
    body: {
      externalId: "x1",
      userName: "u@example.com",
      name: { givenName: "U", familyName: "V" },
      displayName: "U V",
      active: false,
      emails: [{ value: "u@example.com", type: "work", primary: true }],
      [ENT]: { department: "Ops" },
    },
  },
  {
    name: "bench user",
    kind: "User",
    body: {
      schemas: [USER_SCHEMA, ENT],
      userName: "seed1@example.com",
      name: { givenName: "Bench", familyName: "User" },
      emails: [{ value: "seed1@example.com", type: "work", primary: true }],
      displayName: "Bench User",
      active: true,
      [ENT]: { department: "Engineering" },
    },
  },
  { name: "Okta group", kind: "Group", body: { schemas: [GROUP_SCHEMA], displayName: "Engineering", members: [] } },
  { name: "Okta group with members", kind: "Group", body: groupBody("Sales", ["u1", "u2", "u3"]) },
  {
    name: "Entra group",
    kind: "Group",
    body: {
      schemas: [GROUP_SCHEMA],
      externalId: "015489ea-9410-4306-b583-9f002b2446f7",
      displayName: "Group 1",
      meta: { resourceType: "Group" },
      members: [{ value: "u1" }],
    },
  },
  { name: "Group PUT", kind: "Group", body: { schemas: [GROUP_SCHEMA], id: "g-1", displayName: "putName" } },
];

type Outcome = { value: Body } | { error: string; scimType: string | undefined };

function outcome(run: () => Body): Outcome {
  try {
    return { value: run() };
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { error: error.message, scimType: error.scimType };
  }
}

/** Checks one body; true when the fast path decided it. */
function differential(kind: ResourceKind, body: Body): boolean {
  const before = JSON.stringify(body);
  const assigned = (withoutUnassigned(body) ?? {}) as Body;
  const fast = fastCoerceResource(kind, assigned);
  const scimmy = outcome(() => coerceWithScimmy(kind, assigned));
  if (fast !== undefined) {
    expect(scimmy).toStrictEqual({ value: fast });
    expect(JSON.stringify(fast)).toBe(JSON.stringify((scimmy as { value: Body }).value));
    // Fresh objects, never the body's own: a caller may change what it gets back.
    const bodyObjects = new Set(containers(assigned));
    expect(containers(fast).filter((o) => bodyObjects.has(o))).toEqual([]);
  }
  // The public function answers as scimmy alone would, errors (message and scimType) included.
  expect(outcome(() => coerceResource(kind, body))).toStrictEqual(scimmy);
  expect(JSON.stringify(body)).toBe(before);
  return fast !== undefined;
}

const VALID_EXTRAS: Record<ResourceKind, [string, unknown][]> = {
  User: [
    ["title", "Engineer"],
    ["nickName", "Bob"],
    ["userType", "Contractor"],
    ["preferredLanguage", "fr"],
    ["timezone", "Europe/Paris"],
    ["locale", "fr-FR"],
    ["active", false],
    ["externalId", "ext-9"],
    ["password", "hunter2"],
    ["id", "6f1f0d7e-0000-4000-8000-000000000000"],
    ["meta", { resourceType: "User", location: "https://x.example/Users/1", version: 'W/"1"' }],
    ["meta", { resourceType: "User", created: "2020-01-01T00:00:00Z" }],
    ["profileUrl", "https://x.example/u/1"],
    ["ims", [{ value: "bob", type: "skype" }]],
    ["photos", [{ value: "https://x.example/p.png", type: "photo" }]],
    ["entitlements", [{ value: "e1", primary: true }]],
    ["roles", [{ value: "admin", display: "Admin", type: "x", primary: false }]],
    ["x509Certificates", [{ value: "TUlJQg==" }]],
    ["groups", [{ value: "g1", display: "G" }]],
    ["addresses", [{ streetAddress: "1 Rue", locality: "Paris", country: "FR", type: "home", primary: true }]],
    ["phoneNumbers", [{ value: "+33 1", type: "pager", display: "x", primary: true }]],
    ["name", { honorificPrefix: "Dr", honorificSuffix: "III", givenName: "A" }],
    [ENT, { department: "D" }],
    [ENT, { manager: { value: "m", displayName: "M" } }],
    [ENT, { manager: { $ref: "../Users/m", value: "m" } }],
    [ENT, { manager: "m" }],
    [ENT, { employeeNumber: 42 }],
    [ENT, { schemas: [ENT], department: "D" }],
    [`${ENT}:department`, "Sales"],
    ["schemas", [USER_SCHEMA]],
    ["schemas", [ENT, USER_SCHEMA]],
    ["schemas", ["urn:bogus"]],
    ["schemas", "not a list"],
    ["schemas", [1]],
    ["schemas", [GROUP_SCHEMA]],
  ],
  Group: [
    ["externalId", "ext-9"],
    ["id", "g-2"],
    ["meta", { resourceType: "Group" }],
    ["members", [{ value: "u9", display: "U9", type: "User" }]],
    ["members", [{ value: "u9", $ref: "https://x.example/Users/u9" }]],
    ["members", [{ value: "u9", $ref: "nowhere" }]],
    ["schemas", [GROUP_SCHEMA]],
    ["schemas", [USER_SCHEMA]],
    ["displayName", "Renamed"],
  ],
};

const ODD_VALUES = (rng: Rng): unknown[] => [
  null,
  [],
  {},
  "",
  0,
  1.5,
  true,
  "True",
  ["x"],
  [{ value: "x" }],
  { value: "x" },
  "2020-01-01T00:00:00Z",
  nastyString(rng),
];

function recase(rng: Rng, key: string): string {
  return rng.pick([key.toUpperCase(), key.toLowerCase(), key[0]!.toUpperCase() + key.slice(1), `${key} `]);
}

/** One schema-aware change: drop, recase, retype, null or empty a value, add a known or unknown attribute. */
function variant(rng: Rng, kind: ResourceKind, base: Body): Body {
  const body = structuredClone(base);
  const changes = 1 + rng.int(2);
  for (let c = 0; c < changes; c++) {
    const site = rng.pick(containers(body));
    const keys = Object.keys(site);
    const key = keys.length ? rng.pick(keys) : "0";
    const own = site as Body;
    switch (rng.int(7)) {
      case 0:
        if (Array.isArray(site)) site.splice(Number(key), 1);
        else delete own[key];
        break;
      case 1:
        if (!Array.isArray(site)) {
          const value = own[key];
          delete own[key];
          own[recase(rng, key)] = value;
        }
        break;
      case 2:
        own[key] = rng.pick(ODD_VALUES(rng));
        break;
      case 3:
      case 4: {
        const [name, value] = rng.pick(VALID_EXTRAS[kind]);
        body[name] = structuredClone(value);
        break;
      }
      case 5:
        if (Array.isArray(site)) site.push(structuredClone(site[0] ?? { value: "x" }));
        else own[rng.pick(["foo", "Value", "primary", "type", "display", "value", "department"])] = "extra";
        break;
      default:
        if (kind === "User") delete body[ENT];
        else delete body.displayName;
    }
  }
  return body;
}

describe("the fast path in front of scimmy's coerce", () => {
  it.each(CORPUS)("decides the common shape '$name' and gives scimmy's output", ({ kind, body }) => {
    expect(differential(kind, body)).toBe(true);
    // What it stores comes back through it on PATCH and PUT: decided again, unchanged.
    const stored = coerceResource(kind, body);
    expect(fastCoerceResource(kind, stored)).toStrictEqual(stored);
  });

  it("keeps scimmy's key order: schema order at the top, the body's order inside a complex value", () => {
    const body = {
      [ENT]: { manager: { displayName: "Boss", value: "m" }, department: "D" },
      emails: [{ primary: true, value: "a@example.com", type: "work" }],
      name: { givenName: "A", familyName: "B" },
      userName: "a@example.com",
      externalId: "e",
      schemas: [USER_SCHEMA, ENT],
    };
    const out = fastCoerceResource("User", body)!;
    expect(JSON.stringify(out)).toBe(
      JSON.stringify({
        externalId: "e",
        userName: "a@example.com",
        name: { givenName: "A", familyName: "B" },
        emails: [{ primary: true, value: "a@example.com", type: "work" }],
        [ENT]: { department: "D", manager: { displayName: "Boss", value: "m" } },
      }),
    );
    expect(differential("User", body)).toBe(true);
  });

  it("agrees with scimmy on seeded variants of the corpus (missing, recased, retyped, unknown, empty)", () => {
    const rng = prng(Number(process.env.FUZZ_SEED ?? 16));
    let decided = 0;
    const runs = 4000;
    for (let i = 0; i < runs; i++) {
      const { kind, body } = rng.pick(CORPUS);
      const changed = rng.chance(0.75)
        ? variant(rng, kind, body)
        : (mutateJson(rng, body, ["userName", "value", "primary", ENT, "displayName", "members"]) as Body);
      if (!changed || typeof changed !== "object" || Array.isArray(changed)) continue;
      if (differential(kind, changed)) decided++;
    }
    // Not a no-op: a good share of the variants are still canonical and take the fast path.
    expect(decided).toBeGreaterThan(runs / 10);
    expect(decided).toBeLessThan(runs);
  });
});
