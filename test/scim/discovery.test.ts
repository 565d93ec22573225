import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENTERPRISE, GROUP_SCHEMA, USER_SCHEMA, startScimHarness, type ScimHarness } from "../support/scimHarness.js";

describe("SCIM discovery", () => {
  let h: ScimHarness;
  beforeAll(async () => {
    h = await startScimHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  it("ServiceProviderConfig says only what is supported", async () => {
    const res = await h.get("/ServiceProviderConfig");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      patch: { supported: true },
      bulk: { supported: false },
      filter: { supported: true, maxResults: 1000 },
      changePassword: { supported: false },
      sort: { supported: true },
      etag: { supported: true },
    });
    expect(res.body.authenticationSchemes[0].type).toBe("oauthbearertoken");
  });

  it("ResourceTypes lists User (with the enterprise extension), Group, and the catalogue's Role and Entitlement", async () => {
    const res = await h.get("/ResourceTypes");
    expect(res.body.Resources.map((r: { endpoint: string }) => r.endpoint)).toEqual([
      "/Users",
      "/Groups",
      "/Roles",
      "/Entitlements",
    ]);
    expect(res.body.Resources[0].schemaExtensions).toEqual([{ schema: ENTERPRISE, required: false }]);
    expect((await h.get("/ResourceTypes/Group")).body.schema).toBe(GROUP_SCHEMA);
    expect((await h.get("/ResourceTypes/Nope")).status).toBe(404);
  });

  it("Schemas lists the three resource schemas and the catalogue's four, and serves each by id", async () => {
    const res = await h.get("/Schemas");
    expect(res.body.Resources.map((s: { id: string }) => s.id)).toEqual([
      USER_SCHEMA,
      ENTERPRISE,
      GROUP_SCHEMA,
      "urn:okta:scim:schemas:core:1.0:Role",
      "urn:okta:scim:schemas:core:1.0:Entitlement",
      "urn:ietf:params:scim:schemas:core:2.0:Role",
      "urn:ietf:params:scim:schemas:core:2.0:Entitlement",
    ]);
    expect(res.text).toContain("User Account");
    const user = await h.get(`/Schemas/${USER_SCHEMA}`);
    expect(user.status).toBe(200);
    expect(user.body.attributes.map((a: { name: string }) => a.name)).toContain("userName");
    expect(user.body.meta.location).toMatch(new RegExp(`/scim/v2/Schemas/${USER_SCHEMA}$`));
    expect((await h.get(`/Schemas/urn:nope`)).status).toBe(404);
  });
});
