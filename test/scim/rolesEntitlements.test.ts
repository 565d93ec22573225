import { writeFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeMappingFile } from "../support/stack.js";
import { CATALOGUE_MAPPING } from "../support/mapping.js";
import { PATCH_OP, startScimHarness, userBody, type ScimHarness } from "../support/scimHarness.js";

/**
 * Roles and entitlements over SCIM (issue 36): Okta Identity Governance's discovery sequence
 * (/ResourceTypes → /Schemas → each resource endpoint, paged with startIndex/count), Okta's user
 * shape with entitlements[] and roles[], and Entra's app-role payloads as Microsoft documents them
 * ("Customizing user provisioning attribute-mappings", AppRoleAssignmentsComplex: every role
 * `primary: false` with `type: WindowsAzureActiveDirectoryRole` on POST; on PATCH the role's
 * `value` is the assignment as JSON inside a string).
 */

const OKTA_ROLE = "urn:okta:scim:schemas:core:1.0:Role";
const OKTA_ENTITLEMENT = "urn:okta:scim:schemas:core:1.0:Entitlement";

describe("roles and entitlements over SCIM", () => {
  let h: ScimHarness;
  beforeAll(async () => {
    h = await startScimHarness({ MAPPING_FILE: await writeMappingFile(CATALOGUE_MAPPING) });
  });
  afterAll(async () => h?.close());

  it("answers Okta's discovery sequence in full, page by page", async () => {
    const types = (await h.get("/ResourceTypes")).body.Resources as { schema: string; endpoint: string }[];
    const governed = types.filter((t) => t.schema === OKTA_ROLE || t.schema === OKTA_ENTITLEMENT);
    expect(governed.map((t) => t.endpoint)).toEqual(["/Roles", "/Entitlements"]);
    const schemas = (await h.get("/Schemas")).body.Resources.map((s: { id: string }) => s.id);
    expect(schemas).toEqual(expect.arrayContaining([OKTA_ROLE, OKTA_ENTITLEMENT]));
    const seen: Record<string, string[]> = {};
    for (const { endpoint } of governed) {
      seen[endpoint] = [];
      for (let startIndex = 1; ; startIndex++) {
        const page = await h.get(`${endpoint}?startIndex=${startIndex}&count=1`);
        expect(page.status).toBe(200);
        expect(page.body).toMatchObject({ startIndex, itemsPerPage: page.body.Resources.length });
        expect(page.body.Resources.length).toBeLessThanOrEqual(1);
        if (!page.body.Resources.length) break;
        seen[endpoint]!.push(page.body.Resources[0].id);
        expect(startIndex).toBeLessThanOrEqual(page.body.totalResults);
      }
    }
    expect(seen).toEqual({
      "/Roles": ["company-auditor"],
      "/Entitlements": ["marketer-fashion", "lifecycle-team", "eu-analyst"],
    });
    const one = await h.get("/Entitlements/marketer-fashion");
    expect(one.body).toMatchObject({
      schemas: [OKTA_ENTITLEMENT, "urn:ietf:params:scim:schemas:core:2.0:Entitlement"],
      id: "marketer-fashion",
      value: "marketer-fashion",
      displayName: "Marketer – Fashion Brands",
      type: "permissionSet",
      meta: { resourceType: "Entitlement" },
    });
    expect((await h.get("/Roles/marketer-fashion")).status).toBe(404);
    expect((await h.get(`/Schemas/${OKTA_ENTITLEMENT}`)).body.attributes.map((a: { name: string }) => a.name)).toEqual([
      "value",
      "displayName",
      "description",
      "type",
    ]);
  });

  it("filters on type, displayName (eq, sw) and id, and refuses other attributes with invalidFilter", async () => {
    const ids = async (q: string) =>
      (await h.get(`/Entitlements?filter=${encodeURIComponent(q)}`)).body.Resources.map((r: { id: string }) => r.id);
    expect(await ids('type eq "team"')).toEqual(["lifecycle-team"]);
    expect(await ids('displayName eq "eu analyst"')).toEqual(["eu-analyst"]);
    expect(await ids('displayName sw "Marketer"')).toEqual(["marketer-fashion"]);
    expect(await ids('id eq "eu-analyst" or type eq "permissionSet"')).toEqual(["marketer-fashion", "eu-analyst"]);
    const bad = await h.get(`/Roles?filter=${encodeURIComponent('meta.created gt "2020"')}`);
    expect(bad.status).toBe(400);
    expect(bad.body.scimType).toBe("invalidFilter");
  });

  it("round-trips Okta's user shape with entitlements and roles, and PATCH adds, removes by value filter and replaces", async () => {
    const created = await h.post(
      "/Users",
      userBody({
        entitlements: [{ value: "marketer-fashion", display: "Marketer – Fashion Brands", type: "permissionSet" }],
        roles: [{ value: "company-auditor", display: "Auditor" }],
      }),
    );
    expect(created.status, created.text).toBe(201);
    const id = created.body.id as string;
    const read = (await h.get(`/Users/${id}`)).body;
    expect(read.entitlements).toEqual([
      { value: "marketer-fashion", display: "Marketer – Fashion Brands", type: "permissionSet" },
    ]);
    expect(read.roles).toEqual([{ value: "company-auditor", display: "Auditor" }]);

    const patch = (Operations: unknown[]) => h.patch(`/Users/${id}`, { schemas: [PATCH_OP], Operations });
    expect(
      (
        await patch([
          { op: "add", path: "entitlements", value: [{ value: "eu-analyst", type: "workspacePermissions" }] },
        ])
      ).status,
    ).toBe(204);
    expect((await patch([{ op: "remove", path: 'entitlements[value eq "marketer-fashion"]' }])).status).toBe(204);
    expect((await patch([{ op: "replace", path: "roles", value: [{ value: "lifecycle-team" }] }])).status).toBe(204);
    const after = (await h.get(`/Users/${id}`)).body;
    expect(after.entitlements).toEqual([{ value: "eu-analyst", type: "workspacePermissions" }]);
    expect(after.roles).toEqual([{ value: "lifecycle-team" }]);
  });

  it("refuses values the catalogue lacks with a 400 naming each, on POST, PUT and PATCH", async () => {
    const post = await h.post("/Users", userBody({ roles: [{ value: "superuser" }, { value: "company-auditor" }] }));
    expect(post.status).toBe(400);
    expect(post.body.scimType).toBe("invalidValue");
    expect(post.body.detail).toContain('roles value "superuser"');
    expect(post.body.detail).not.toContain("company-auditor");
    const id = (await h.post("/Users", userBody())).body.id as string;
    const put = await h.put(`/Users/${id}`, userBody({ entitlements: [{ value: "gold-license" }] }));
    expect(put.status).toBe(400);
    expect(put.body.detail).toContain('entitlements value "gold-license"');
    const patch = await h.patch(`/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "add", path: "roles", value: [{ value: "admin-of-everything" }] }],
    });
    expect(patch.status).toBe(400);
    expect(patch.body.detail).toContain('roles value "admin-of-everything"');
    expect((await h.get(`/Users/${id}`)).body.roles).toBeUndefined();
  });

  it("takes Entra's app roles as sent: primary false on every role (POST), the PATCH value as JSON inside a string", async () => {
    const created = await h.post(
      "/Users",
      userBody({
        roles: [
          { primary: false, type: "WindowsAzureActiveDirectoryRole", display: "Auditor", value: "company-auditor" },
          { primary: false, type: "WindowsAzureActiveDirectoryRole", display: "EU analyst", value: "eu-analyst" },
        ],
      }),
    );
    expect(created.status, created.text).toBe(201);
    const id = created.body.id as string;
    const add = await h.patch(`/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [
        {
          op: "Add",
          path: "roles",
          value: [
            {
              value: JSON.stringify({
                id: "06b07648-ecfe-589f-9d2f-6325724a46ee",
                value: "marketer-fashion",
                displayName: "Marketer – Fashion Brands",
              }),
            },
          ],
        },
      ],
    });
    expect(add.status, add.text).toBe(204);
    const roles = (await h.get(`/Users/${id}`)).body.roles as { value: string; display?: string }[];
    expect(roles.map((r) => r.value)).toEqual(["company-auditor", "eu-analyst", "marketer-fashion"]);
    expect(roles[2]).toEqual({ value: "marketer-fashion", display: "Marketer – Fashion Brands" });

    const unknown = await h.patch(`/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "Add", path: "roles", value: [{ value: JSON.stringify({ id: "x", value: "25" }) }] }],
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.detail).toContain('roles value "25"');
  });
});

describe("a catalogue entry dropped while users hold it", () => {
  let h: ScimHarness;
  let mappingFile: string;
  beforeAll(async () => {
    mappingFile = await writeMappingFile(CATALOGUE_MAPPING);
    h = await startScimHarness({ MAPPING_FILE: mappingFile });
  });
  afterAll(async () => h?.close());

  it("does not block the IdP's PUTs of those users; a value the PUT adds is still checked", async () => {
    const body = userBody({ roles: [{ value: "lifecycle-team" }] });
    const id = (await h.post("/Users", body)).body.id as string;
    // Lifecycle team leaves the catalogue.
    const dropped = CATALOGUE_MAPPING.replace(/    - id: lifecycle-team\n(      .*\n)+?(?=    - id:)/, "");
    expect(dropped).not.toContain("lifecycle-team");
    await writeFile(mappingFile, dropped);
    expect(await h.service.mappings.reload(h.service.db)).toEqual({ ok: true, changed: true });

    // The held value stays, the rest of the user changes (one statement: the roles are as stored).
    const renamed = await h.put(`/Users/${id}`, { ...body, name: { givenName: "Renamed", familyName: "Family" } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.name.givenName).toBe("Renamed");
    // The PUT adds a role (the user read first): only the added value is checked, with If-Match too.
    const added = await h
      .put(`/Users/${id}`, { ...body, roles: [{ value: "lifecycle-team" }, { value: "company-auditor" }] })
      .set("If-Match", renamed.headers.etag as string);
    expect(added.status).toBe(200);
    expect(added.body.roles.map((r: { value: string }) => r.value)).toEqual(["lifecycle-team", "company-auditor"]);
    const unknown = await h.put(`/Users/${id}`, {
      ...body,
      roles: [{ value: "lifecycle-team" }, { value: "superuser" }],
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.detail).toContain('roles value "superuser"');
    expect(unknown.body.detail).not.toContain("lifecycle-team");
  });
});

describe("roles and entitlements without a catalogue", () => {
  let h: ScimHarness;
  beforeAll(async () => {
    h = await startScimHarness();
  });
  afterAll(async () => h?.close());

  it("stores them as before, refusing nothing: the check is on only when the mapping declares a catalogue", async () => {
    const created = await h.post(
      "/Users",
      userBody({ userName: "no-catalogue@example.com", roles: [{ value: "msiam_access", primary: false }] }),
    );
    expect(created.status, created.text).toBe(201);
    expect(created.body.roles).toEqual([expect.objectContaining({ value: "msiam_access" })]);
    const patched = await h.patch(`/Users/${created.body.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "add", path: "entitlements", value: [{ value: "anything" }] }],
    });
    expect(patched.status, patched.text).toBeLessThan(300);
  });
});
