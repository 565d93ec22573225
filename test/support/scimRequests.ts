import {
  corruptBytes,
  mutateJson,
  nastyString,
  prng,
  randomValue,
  withDuplicateKey,
  type RawRequest,
  type Rng,
} from "./fuzz.js";
import { ENTERPRISE } from "./constants.js";

/**
 * The request generator of the SCIM fuzz test: request i is a pure function of (seed, i) and the
 * ids seeded before the run, so a failure replays with FUZZ_SEED whatever the concurrency did.
 */

const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";
const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

export type FuzzIds = { users: string[]; groups: string[] };
export type FuzzCase = { kind: string; request: RawRequest };

const KEYS: readonly string[] = [
  "schemas",
  "id",
  "externalId",
  "userName",
  "name",
  "givenName",
  "familyName",
  "formatted",
  "displayName",
  "nickName",
  "title",
  "active",
  "emails",
  "value",
  "type",
  "primary",
  "display",
  "members",
  "groups",
  "meta",
  "resourceType",
  "locale",
  "password",
  "addresses",
  "phoneNumbers",
  "roles",
  "department",
  "manager",
  "employeeNumber",
  ENTERPRISE,
  `${ENTERPRISE}:department`,
  "Operations",
  "op",
  "path",
  "name.givenName",
  'emails[type eq "work"].value',
  "$ref",
  "__proto__",
  "constructor",
];

export function oktaUser(userName: string): Record<string, unknown> {
  return {
    schemas: [USER_SCHEMA],
    userName,
    name: { givenName: "Ada", familyName: "Lovelace" },
    emails: [{ primary: true, value: userName, type: "work" }],
    displayName: "Ada Lovelace",
    locale: "en-US",
    externalId: "00u1abcdEFGHijkl0h7",
    groups: [],
    password: "Sup3rS3cret!",
    active: true,
  };
}

export function entraUser(userName: string): Record<string, unknown> {
  return {
    schemas: [USER_SCHEMA, ENTERPRISE],
    externalId: "e3a1b2c3-d4e5-4f60-8a9b-0c1d2e3f4a5b",
    userName,
    active: true,
    addresses: [{ primary: true, type: "work", streetAddress: "1 Main St", locality: "Dublin", country: "IE" }],
    displayName: "Grace Hopper",
    emails: [{ primary: true, type: "work", value: userName }],
    meta: { resourceType: "User" },
    name: { formatted: "Grace Hopper", familyName: "Hopper", givenName: "Grace" },
    title: "Engineer",
    phoneNumbers: [{ primary: true, type: "work", value: "+353 1 000 0000" }],
    [ENTERPRISE]: { department: "Marketing", employeeNumber: "42", manager: { value: "mgr-1" } },
  };
}

export function groupBody(displayName: string, members: string[]): Record<string, unknown> {
  return {
    schemas: [GROUP_SCHEMA],
    displayName,
    externalId: "grp-ext-1",
    members: members.map((value) => ({ value, display: "someone" })),
  };
}

const USER_PATHS = [
  "active",
  "userName",
  "displayName",
  "name.givenName",
  "name.familyName",
  "name",
  "title",
  "externalId",
  "emails",
  'emails[type eq "work"].value',
  "emails[primary eq true]",
  'emails[type eq "work" and primary eq true].value',
  'phoneNumbers[type eq "mobile"].value',
  'addresses[type eq "work"].streetAddress',
  `${ENTERPRISE}:department`,
  `${ENTERPRISE}:manager`,
  `${ENTERPRISE}:manager.value`,
  ENTERPRISE,
  "meta",
  "id",
  "schemas",
  "groups",
  "password",
  "nonexistent",
  "name.",
  ".name",
  "emails[",
  "emails[]",
  "emails[type eq]",
  'emails[value co "\'"].display',
];
const GROUP_PATHS = [
  "members",
  'members[value eq "%ID%"]',
  'members[value ne "x"]',
  "displayName",
  "externalId",
  "members.value",
  "members[display pr]",
  "id",
  "meta.created",
];
const OPS = ["add", "replace", "remove", "Add", "Replace", "Remove", "ADD", "copy", "move", "test", "", "x"];

/** Operations as Okta and Entra really send them (valid, so the apply logic runs to the end). */
function realisticOperation(rng: Rng, forGroup: boolean, ids: FuzzIds): Record<string, unknown> {
  const member = () => ({ value: rng.pick(ids.users) });
  if (forGroup) {
    return rng.pick<() => Record<string, unknown>>([
      () => ({ op: "add", path: "members", value: [member(), member()] }),
      () => ({ op: "Add", path: "members", value: [member()] }),
      () => ({ op: "remove", path: `members[value eq "${rng.pick(ids.users)}"]` }),
      () => ({ op: "Remove", path: "members", value: [member()] }),
      () => ({ op: "replace", path: "members", value: [member()] }),
      () => ({ op: "replace", value: { id: rng.pick(ids.groups), displayName: `Renamed ${rng.int(1e6)}` } }),
      () => ({ op: "Replace", path: "displayName", value: `Renamed ${nastyString(rng).slice(0, 50)}` }),
      () => ({ op: "replace", path: "externalId", value: nastyString(rng).slice(0, 100) }),
    ])();
  }
  return rng.pick<() => Record<string, unknown>>([
    () => ({ op: "replace", value: { active: rng.chance(0.5) } }),
    () => ({ op: "Replace", path: "active", value: rng.pick(["True", "False"]) }),
    () => ({ op: "replace", path: "name.givenName", value: nastyString(rng).slice(0, 100) }),
    () => ({ op: "Replace", path: "displayName", value: nastyString(rng).slice(0, 100) }),
    () => ({ op: "Add", path: 'emails[type eq "work"].value', value: `p${rng.int(1e9)}@example.com` }),
    () => ({ op: "Replace", path: 'phoneNumbers[type eq "mobile"].value', value: "+1 555 0100" }),
    () => ({ op: "Add", path: `${ENTERPRISE}:department`, value: nastyString(rng).slice(0, 60) }),
    () => ({ op: "Replace", path: `${ENTERPRISE}:manager`, value: rng.pick(ids.users) }),
    () => ({ op: "remove", path: `${ENTERPRISE}:manager` }),
    () => ({
      op: "Add",
      value: { "name.familyName": "F", title: nastyString(rng).slice(0, 40), [`${ENTERPRISE}:department`]: "Sales" },
    }),
    () => ({ op: "remove", path: "title" }),
    () => ({
      op: "replace",
      path: "emails",
      value: [{ value: `q${rng.int(1e9)}@example.com`, type: "work", primary: true }],
    }),
  ])();
}

function patchOperation(rng: Rng, forGroup: boolean, ids: FuzzIds): unknown {
  if (rng.chance(0.4)) {
    const op = realisticOperation(rng, forGroup, ids);
    return rng.chance(0.25) ? mutateJson(rng, op, KEYS) : op;
  }
  const paths = forGroup ? GROUP_PATHS : USER_PATHS;
  const idFor = () => (rng.chance(0.7) && ids.users.length ? rng.pick(ids.users) : nastyString(rng));
  const path = rng.chance(0.2)
    ? undefined
    : rng.chance(0.85)
      ? rng.pick(paths).replace("%ID%", idFor())
      : nastyString(rng);
  let value: unknown;
  const r = rng.next();
  if (forGroup && r < 0.4) value = Array.from({ length: rng.int(4) }, () => ({ value: idFor(), display: "m" }));
  else if (r < 0.5) value = rng.pick([true, false, "True", "False", "true", 0, 1, null]);
  else if (r < 0.65 && path === undefined) {
    // Path-less operations carry an object of attributes, in Okta's and Entra's dialects.
    value = forGroup
      ? { id: rng.pick(ids.groups), displayName: nastyString(rng) }
      : rng.pick([
          { active: false },
          { "name.givenName": nastyString(rng) },
          { [`${ENTERPRISE}:department`]: nastyString(rng) },
          { emails: [{ value: nastyString(rng), type: "work" }] },
        ]);
  } else value = randomValue(rng, KEYS);
  const op: Record<string, unknown> = { op: rng.chance(0.9) ? rng.pick(OPS) : randomValue(rng, KEYS) };
  if (path !== undefined) op.path = path;
  if (!rng.chance(0.1)) op.value = value;
  return rng.chance(0.1) ? mutateJson(rng, op, KEYS) : op;
}

function patchBody(rng: Rng, forGroup: boolean, ids: FuzzIds): unknown {
  if (rng.chance(0.3))
    return {
      schemas: [PATCH_OP],
      Operations: Array.from({ length: 1 + rng.int(3) }, () => realisticOperation(rng, forGroup, ids)),
    };
  const body = {
    schemas: [PATCH_OP],
    Operations: Array.from({ length: 1 + rng.int(4) }, () => patchOperation(rng, forGroup, ids)),
  };
  return rng.chance(0.15) ? mutateJson(rng, body, KEYS) : body;
}

const FILTER_ATTRS = [
  "userName",
  "displayName",
  "externalId",
  "id",
  "active",
  "name.givenName",
  "name.familyName",
  "emails",
  "emails.value",
  "emails.type",
  "meta.created",
  "meta.lastModified",
  "title",
  `${ENTERPRISE}:department`,
  `${ENTERPRISE}:manager.value`,
  "members",
  "members.value",
  "groups",
  "USERNAME",
  "nope",
  "name",
  "urn:x:y",
  "a.b.c",
];
const FILTER_OPS = ["eq", "ne", "co", "sw", "ew", "gt", "ge", "lt", "le", "EQ", "Eq", "pr", "xx"];
const FILTER_VALUES = [
  '"x"',
  '"ann@example.com"',
  "true",
  "false",
  "null",
  "1",
  "-1.5e3",
  '"2020-01-01T00:00:00Z"',
  '"%"',
  '"_"',
  '"\' OR 1=1 --"',
  '"\\""',
  '"\\\\"',
  '"😀"',
  '"\\u0000"',
  "'single'",
  "x",
  '"' + "y".repeat(5000) + '"',
];

function filterExpression(rng: Rng, depth: number): string {
  const r = rng.next();
  if (depth > 3 || r < 0.45) {
    const attr = rng.pick(FILTER_ATTRS);
    const op = rng.pick(FILTER_OPS);
    return op === "pr"
      ? `${attr} pr`
      : `${attr} ${op} ${rng.chance(0.9) ? rng.pick(FILTER_VALUES) : JSON.stringify(nastyString(rng))}`;
  }
  if (r < 0.65)
    return `${filterExpression(rng, depth + 1)} ${rng.pick(["and", "or", "AND", "Or"])} ${filterExpression(rng, depth + 1)}`;
  if (r < 0.75) return `not (${filterExpression(rng, depth + 1)})`;
  if (r < 0.85) return `(${filterExpression(rng, depth + 1)})`;
  return `${rng.pick(["emails", "members", "addresses", "groups", "name"])}[${filterExpression(rng, depth + 1)}]`;
}

function filterString(rng: Rng): string {
  const r = rng.next();
  if (r < 0.55) return filterExpression(rng, 0);
  if (r < 0.7) {
    // Grammar-ish garbage: valid tokens in random order.
    const parts = [
      "userName",
      "eq",
      "and",
      "or",
      "not",
      "(",
      ")",
      "[",
      "]",
      '"',
      '"x"',
      "pr",
      "emails",
      "1",
      "\\",
      "'",
    ];
    return Array.from({ length: 1 + rng.int(12) }, () => rng.pick(parts)).join(rng.chance(0.5) ? " " : "");
  }
  if (r < 0.8) return "(".repeat(1 + rng.int(3000)) + 'userName eq "x"' + ")".repeat(rng.int(3000));
  if (r < 0.85) return Array.from({ length: 10 + rng.int(200) }, () => 'userName eq "x"').join(" or ");
  // Around the filter's own 4,096-character limit; now and then past Node's 16 KB request-line limit (431).
  if (r < 0.9) return "x".repeat(rng.chance(0.9) ? 3000 + rng.int(3000) : 17_000 + rng.int(5000));
  return nastyString(rng);
}

/** Percent-encodes a string for a query value, sometimes leaving junk that is not valid encoding. */
function queryValue(rng: Rng, value: string): string {
  const encoded = encodeURIComponent(value.replace(/[\ud800-\udfff]/g, "?"));
  return rng.chance(0.05) ? encoded + rng.pick(["%", "%zz", "%C3%28", "%FF", "%00", "%E2%82"]) : encoded;
}

function listQuery(rng: Rng): string {
  const params: string[] = [];
  if (rng.chance(0.85))
    params.push(`${rng.pick(["filter", "FILTER", "Filter"])}=${queryValue(rng, filterString(rng))}`);
  if (rng.chance(0.1)) params.push(`filter=${queryValue(rng, filterString(rng))}`); // repeated
  if (rng.chance(0.3))
    params.push(
      `startIndex=${queryValue(rng, String(rng.pick<unknown>([0, -5, 1, 2, 99999999999, "1e3", "abc", "", "1.5", nastyString(rng)])))}`,
    );
  if (rng.chance(0.3))
    params.push(
      `count=${queryValue(rng, String(rng.pick<unknown>([0, -1, 1, 10, 100000, 999999999999, "x", "", nastyString(rng)])))}`,
    );
  if (rng.chance(0.2))
    params.push(
      `sortBy=${queryValue(rng, rng.pick(FILTER_ATTRS))}&sortOrder=${rng.pick(["ascending", "descending", "sideways"])}`,
    );
  if (rng.chance(0.25))
    params.push(
      `attributes=${queryValue(rng, Array.from({ length: 1 + rng.int(4) }, () => rng.pick([...FILTER_ATTRS, nastyString(rng)])).join(","))}`,
    );
  if (rng.chance(0.15))
    params.push(`excludedAttributes=${queryValue(rng, rng.pick([...FILTER_ATTRS, nastyString(rng)]))}`);
  if (rng.chance(0.05)) params.push(`attributes[]=x&attributes[a]=y`);
  return params.join("&");
}

const JUNK_IDS = [
  "not-a-uuid",
  "00000000-0000-0000-0000-000000000000",
  "6f1f0d7e-0000-4000-8000-000000000000",
  "..",
  "..%2F..%2Fetc%2Fpasswd",
  "%2e%2e%2f%2e%2e%2f",
  "%00",
  "%zz",
  "%",
  "%C3%28",
  "%FF%FE",
  "' OR 1=1 --".replace(/ /g, "%20"),
  "%27%20OR%201%3D1%20--",
  "1;DROP%20TABLE%20idp_users",
  "%E2%80%AE",
  "x".repeat(3000),
  "%F0%9F%98%80",
  "6F1F0D7E-0000-4000-8000-000000000000",
  "{6f1f0d7e-0000-4000-8000-000000000000}",
  "%20",
  "a/b/c",
  "Users",
  ".Users",
];

function resourcePath(rng: Rng, ids: FuzzIds): string {
  const r = rng.next();
  if (r < 0.5 && ids.users.length) return `/Users/${rng.pick(ids.users)}`;
  if (r < 0.7 && ids.groups.length) return `/Groups/${rng.pick(ids.groups)}`;
  return `/${rng.pick(["Users", "Groups", "users", "Schemas", "ResourceTypes", "Me", "Bulk", ".search", "Users/.search"])}/${rng.pick(JUNK_IDS)}`;
}

const scimJson = { "Content-Type": "application/scim+json" };

function jsonRequest(method: string, path: string, body: unknown, rng: Rng): RawRequest {
  let text = JSON.stringify(body) ?? "null";
  if (rng.chance(0.05) && body && typeof body === "object" && !Array.isArray(body))
    text = withDuplicateKey(rng, body as Record<string, unknown>);
  const headers = rng.chance(0.8)
    ? scimJson
    : { "Content-Type": rng.pick(["application/json", "application/json; charset=utf-8", "APPLICATION/SCIM+JSON"]) };
  return { method, path, headers, body: rng.chance(0.05) ? corruptBytes(rng, text) : text };
}

/** The i-th request of the run. */
export function fuzzCase(seed: number, i: number, ids: FuzzIds, maxBodyBytes: number): FuzzCase {
  const rng = prng((seed ^ Math.imul(i + 1, 0x9e3779b1)) >>> 0);
  const base = "/scim/v2";
  const userId = () => rng.pick(ids.users);
  const groupId = () => rng.pick(ids.groups);
  const uniqueEmail = () => `fuzz-${seed}-${i}-${rng.int(1e9)}@example.com`;
  const r = rng.int(1000);

  if (r < 150) {
    const source = rng.chance(0.5) ? oktaUser(uniqueEmail()) : entraUser(uniqueEmail());
    return {
      kind: "post-user",
      request: jsonRequest(
        "POST",
        `${base}/Users`,
        rng.chance(0.85) ? mutateJson(rng, source, KEYS) : randomValue(rng, KEYS),
        rng,
      ),
    };
  }
  if (r < 210) {
    const body = groupBody(`Fuzz ${nastyString(rng).slice(0, 80)} ${i}`, ids.users.slice(0, rng.int(4)));
    return { kind: "post-group", request: jsonRequest("POST", `${base}/Groups`, mutateJson(rng, body, KEYS), rng) };
  }
  if (r < 290) {
    const body = mutateJson(rng, rng.chance(0.5) ? oktaUser(uniqueEmail()) : entraUser(uniqueEmail()), KEYS);
    return { kind: "put-user", request: jsonRequest("PUT", `${base}/Users/${userId()}`, body, rng) };
  }
  if (r < 320) {
    return {
      kind: "put-group",
      request: jsonRequest(
        "PUT",
        `${base}/Groups/${groupId()}`,
        mutateJson(rng, groupBody(`Put ${i}`, ids.users.slice(0, 2)), KEYS),
        rng,
      ),
    };
  }
  if (r < 470)
    return {
      kind: "patch-user",
      request: jsonRequest(
        "PATCH",
        `${base}/Users/${userId()}${rng.chance(0.1) ? "?attributes=userName" : ""}`,
        patchBody(rng, false, ids),
        rng,
      ),
    };
  if (r < 560)
    return {
      kind: "patch-group",
      request: jsonRequest("PATCH", `${base}/Groups/${groupId()}`, patchBody(rng, true, ids), rng),
    };
  if (r < 740) {
    const resource = rng.pick(["Users", "Users", "Groups"]);
    return { kind: "list", request: { method: "GET", path: `${base}/${resource}?${listQuery(rng)}` } };
  }
  if (r < 760) {
    // RFC 7644 3.4.3: POST .search with the query in the body.
    const body = {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"],
      filter: filterString(rng),
      startIndex: randomValue(rng, KEYS),
      count: rng.int(50),
    };
    return {
      kind: "search",
      request: jsonRequest("POST", `${base}/${rng.pick(["Users", "Groups", ""])}/.search`, body, rng),
    };
  }
  if (r < 840) {
    const method = rng.pick(["GET", "GET", "DELETE", "PUT", "PATCH", "POST", "HEAD", "OPTIONS"]);
    const path = rng.chance(0.15)
      ? rng.pick([
          "/ServiceProviderConfig",
          "/Schemas",
          `/Schemas/${USER_SCHEMA}`,
          "/ResourceTypes",
          "/ResourceTypes/User",
          "/Schemas/%zz",
          "/",
        ])
      : resourcePath(rng, ids);
    // DELETE only ever targets junk: the seeded ids must stay for the rest of the run.
    const safePath =
      method === "DELETE" && !path.includes("%") && ids.users.concat(ids.groups).some((id) => path.endsWith(id))
        ? `/Users/${rng.pick(JUNK_IDS)}`
        : path;
    const withBody = method === "PUT" || method === "PATCH" || method === "POST";
    return {
      kind: "path",
      request: withBody
        ? jsonRequest(method, `${base}${safePath}`, randomValue(rng, KEYS), rng)
        : { method, path: `${base}${safePath}` },
    };
  }
  if (r < 860) {
    // Larger than SCIM_MAX_BODY_BYTES: 413 whether announced by Content-Length or streamed chunked.
    const big = JSON.stringify({ ...oktaUser(uniqueEmail()), displayName: "B".repeat(maxBodyBytes + rng.int(50_000)) });
    return {
      kind: "huge",
      request: {
        method: rng.pick(["POST", "PUT", "PATCH"]),
        path: `${base}/Users${rng.chance(0.5) ? `/${userId()}` : ""}`,
        headers: scimJson,
        body: big,
        chunked: rng.chance(0.5),
      },
    };
  }
  if (r < 890) {
    // Deeply nested: objects or arrays, at a field or as the whole body, up to 100,000 levels.
    // Built as text: JSON.stringify itself would overflow the stack on the deepest ones.
    const depth = rng.pick([33, 100, 1000, 10_000, 100_000]);
    const [open, close] = rng.chance(0.5) ? ['{"a":', "}"] : ["[", "]"];
    const deep = `${open.repeat(depth)}"x"${close.repeat(depth)}`;
    const user = JSON.stringify(oktaUser(uniqueEmail()));
    const body = rng.chance(0.5) ? deep : `${user.slice(0, -1)},${JSON.stringify(rng.pick(KEYS))}:${deep}}`;
    return {
      kind: "deep",
      request: {
        method: rng.pick(["POST", "PATCH", "PUT"]),
        path: `${base}/Users${rng.chance(0.5) ? `/${userId()}` : ""}`,
        headers: scimJson,
        body,
      },
    };
  }
  if (r < 950) {
    const types = [
      undefined,
      "text/plain",
      "multipart/form-data; boundary=xyz",
      "application/x-www-form-urlencoded",
      "application/json; charset=latin1",
      "application/scim+json; charset=iso-8859-1",
      "application/json; charset=utf-16",
      "application/xml",
      'application/json; charset="utf-8"',
      "*/*",
      "",
      "application/json;;",
      "application/jsonx",
    ];
    const type = rng.pick(types);
    const text = JSON.stringify(oktaUser(uniqueEmail()));
    const body = type?.startsWith("multipart")
      ? `--xyz\r\nContent-Disposition: form-data; name="a"\r\n\r\n${text}\r\n--xyz--\r\n`
      : rng.chance(0.3)
        ? Buffer.from(text, "latin1")
        : text;
    const headers: Record<string, string> = type === undefined ? {} : { "Content-Type": type };
    if (rng.chance(0.1)) headers["Content-Encoding"] = rng.pick(["gzip", "br", "identity", "x-bogus"]);
    return {
      kind: "content-type",
      request: {
        method: rng.pick(["POST", "PATCH", "PUT"]),
        path: `${base}/Users${rng.chance(0.5) ? `/${userId()}` : ""}`,
        headers,
        body,
      },
    };
  }
  // Invalid UTF-8 and raw junk bytes as the body.
  const junk = rng.chance(0.5)
    ? corruptBytes(rng, JSON.stringify(oktaUser(uniqueEmail())))
    : Buffer.from(Array.from({ length: 1 + rng.int(2000) }, () => rng.int(256)));
  return {
    kind: "bytes",
    request: {
      method: rng.pick(["POST", "PATCH", "PUT"]),
      path: `${base}/Users${rng.chance(0.5) ? `/${userId()}` : ""}`,
      headers: scimJson,
      body: junk,
    },
  };
}
