import { describe, expect, it } from "vitest";
import { ScimRoutes, type Handler, type ResourceHandlers } from "../../src/http/scim/routes.js";

/** Each handler answers its own name, so a match says which one it found. */
const named =
  (name: string): Handler =>
  () => ({ status: 200, body: name });

function resource(prefix: string): ResourceHandlers {
  const names = ["list", "search", "create", "read", "replace", "patch", "remove"] as const;
  return Object.fromEntries(names.map((n) => [n, named(`${prefix}.${n}`)])) as ResourceHandlers;
}

const routes = new ScimRoutes({
  users: resource("users"),
  groups: resource("groups"),
  discovery: {
    serviceProviderConfig: named("spc"),
    resourceTypes: named("resourceTypes"),
    resourceType: named("resourceType"),
    schemas: named("schemas"),
    schema: named("schema"),
  },
  catalogue: {
    roles: named("roles"),
    role: named("role"),
    entitlements: named("entitlements"),
    entitlement: named("entitlement"),
  },
  search: named("rootSearch"),
});

async function matched(method: string, path: string): Promise<[unknown, string] | undefined> {
  const match = routes.match(method, path);
  if (!match) return undefined;
  const reply = await match.handler({ query: {}, body: undefined, context: { method } }, match.id);
  return [reply.body, match.id];
}

describe("SCIM routes", () => {
  it.each([
    ["GET", "/Users", "users.list", ""],
    ["HEAD", "/Users", "users.list", ""],
    ["GET", "/users/", "users.list", ""],
    ["POST", "/USERS", "users.create", ""],
    ["POST", "/Users/.search", "users.search", ""],
    ["POST", "/Users/.SEARCH/", "users.search", ""],
    ["GET", "/Users/.search", "users.read", ".search"],
    ["GET", "/Users/abc", "users.read", "abc"],
    ["HEAD", "/Users/abc/", "users.read", "abc"],
    ["PUT", "/Users/abc", "users.replace", "abc"],
    ["PATCH", "/Users/abc", "users.patch", "abc"],
    ["DELETE", "/Users/abc", "users.remove", "abc"],
    ["GET", "/Users/a%2Fb%20c", "users.read", "a/b c"],
    ["PATCH", "/Groups/g1", "groups.patch", "g1"],
    ["POST", "/groups/.search", "groups.search", ""],
    ["GET", "/ServiceProviderConfig/", "spc", ""],
    ["GET", "/ResourceTypes", "resourceTypes", ""],
    ["GET", "/resourcetypes/User", "resourceType", "User"],
    [
      "GET",
      "/Schemas/urn:ietf:params:scim:schemas:core:2.0:User",
      "schema",
      "urn:ietf:params:scim:schemas:core:2.0:User",
    ],
    ["POST", "/.search", "rootSearch", ""],
    ["POST", "/.SEARCH/", "rootSearch", ""],
    ["GET", "/Roles", "roles", ""],
    ["GET", "/roles/marketer-fashion", "role", "marketer-fashion"],
    ["GET", "/Entitlements/", "entitlements", ""],
    ["GET", "/Entitlements/eu%3Aanalyst", "entitlement", "eu:analyst"],
  ])("%s %s → %s", async (method, path, handler, id) => {
    expect(await matched(method, path)).toEqual([handler, id]);
  });

  it.each([
    ["GET", "/"],
    ["GET", ""],
    ["DELETE", "/Users"],
    ["PUT", "/Users"],
    ["POST", "/Users/abc"],
    ["GET", "/Users//"],
    ["GET", "/Users/abc/def"],
    ["GET", "/Users/abc//"],
    ["POST", "/ServiceProviderConfig"],
    ["GET", "/ServiceProviderConfig/x"],
    ["GET", "/ServiceProviderConfigs"],
    ["GET", "/.search"],
    ["POST", "/Schemas"],
    ["POST", "/Roles"],
    ["PUT", "/Entitlements/x"],
    ["DELETE", "/Roles/x"],
    ["GET", "/Bulk"],
    ["GET", "/Me"],
    ["PROPFIND", "/Users"],
    ["GET", "/constructor"],
    ["CONSTRUCTOR", "/Users/abc"],
  ])("%s %s is no endpoint", (method, path) => {
    expect(routes.match(method, path)).toBeUndefined();
  });

  it("an id that is not valid percent-encoding is a 400 for every method, as Express answered", () => {
    for (const method of ["GET", "PUT", "POST", "DELETE", "OPTIONS"]) {
      expect(() => routes.match(method, "/Users/%zz"), method).toThrowError(
        expect.objectContaining({ status: 400, scimType: "invalidSyntax" }),
      );
    }
    expect(() => routes.match("GET", "/Schemas/%E2%82")).toThrowError(expect.objectContaining({ status: 400 }));
  });

  it("says which methods a path answers, for OPTIONS", () => {
    expect(routes.allowed("/Users")).toEqual(["GET", "HEAD", "POST"]);
    expect(routes.allowed("/Users/abc")).toEqual(["GET", "HEAD", "PUT", "PATCH", "DELETE"]);
    expect(routes.allowed("/Users/.search")).toEqual(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]);
    expect(routes.allowed("/.search")).toEqual(["POST"]);
    expect(routes.allowed("/Schemas")).toEqual(["GET", "HEAD"]);
    expect(routes.allowed("/Me")).toEqual([]);
  });
});
