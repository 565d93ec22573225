import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ENTERPRISE,
  PATCH_OP,
  USER_SCHEMA,
  dirtyMarks,
  startScimHarness,
  userBody,
  type ScimHarness,
} from "../support/scimHarness.js";

describe("SCIM /Users", () => {
  let h: ScimHarness;
  beforeAll(async () => {
    h = await startScimHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  it("creates a user: 201, Location equal to meta.location, weak ETag version", async () => {
    const body = userBody({ externalId: "ext-1", [ENTERPRISE]: { department: "Sales", employeeNumber: "42" } });
    const res = await h.post("/Users", body);
    expect(res.status).toBe(201);
    expect(res.headers["content-type"]).toMatch(/^application\/scim\+json/);
    expect(res.body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers.location).toBe(res.body.meta.location);
    expect(res.body.meta).toMatchObject({ resourceType: "User", version: 'W/"1"' });
    expect(res.headers.etag).toBe('W/"1"');
    expect(res.body.schemas).toEqual([USER_SCHEMA, ENTERPRISE]);
    expect(res.body[ENTERPRISE]).toEqual({ department: "Sales", employeeNumber: "42" });
    expect(res.body.userName).toBe(body.userName);

    const got = await h.get(`/Users/${res.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
  });

  it("rejects a duplicate userName case-insensitively with 409 uniqueness", async () => {
    const body = userBody();
    expect((await h.post("/Users", body)).status).toBe(201);
    const again = await h.post("/Users", { ...body, userName: String(body.userName).toUpperCase() });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({
      status: "409",
      scimType: "uniqueness",
      schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"],
    });
  });

  it("filters by userName case-insensitively and pages with integer fields", async () => {
    const body = userBody();
    const created = await h.post("/Users", body);
    const res = await h.get(
      `/Users?filter=${encodeURIComponent(`userName eq "${String(body.userName).toUpperCase()}"`)}`,
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ totalResults: 1, startIndex: 1, itemsPerPage: 1 });
    expect(res.body.Resources[0].id).toBe(created.body.id);

    const page = await h.get(`/Users?startIndex=2&count=1`);
    expect(page.body.startIndex).toBe(2);
    expect(page.body.itemsPerPage).toBe(1);
    expect(page.body.totalResults).toBeGreaterThanOrEqual(3);
    const all = await h.get(`/Users?count=100`);
    expect(page.body.Resources[0].id).toBe(all.body.Resources[1].id);
    const beyond = await h.get(`/Users?startIndex=1000&count=5`);
    expect(beyond.body).toMatchObject({ totalResults: all.body.totalResults, itemsPerPage: 0, Resources: [] });
    const none = await h.get(`/Users?count=0`);
    expect(none.body).toMatchObject({ totalResults: all.body.totalResults, itemsPerPage: 0 });
  });

  it("supports the filter operators, not and parentheses", async () => {
    const marker = `m${Date.now()}`;
    const a = (
      await h.post("/Users", userBody({ userName: `${marker}.alice@example.com`, title: "Engineer", active: true }))
    ).body;
    const b = (
      await h.post("/Users", userBody({ userName: `${marker}.bob@example.org`, title: "Manager", active: false }))
    ).body;
    const ids = async (filter: string) => {
      const res = await h.get(`/Users?count=1000&filter=${encodeURIComponent(filter)}`);
      expect(res.status, `${filter}: ${JSON.stringify(res.body)}`).toBe(200);
      return (res.body.Resources as { id: string }[])
        .map((r) => r.id)
        .filter((id) => id === a.id || id === b.id)
        .sort();
    };
    const both = [a.id, b.id].sort();
    expect(await ids(`userName sw "${marker}"`)).toEqual(both);
    expect(await ids(`userName ew ".ORG" and userName sw "${marker}"`)).toEqual([b.id]);
    expect(await ids(`userName co "ALICE"`)).toEqual([a.id]);
    expect(await ids(`userName sw "${marker}" and not (active eq true)`)).toEqual([b.id]);
    expect(await ids(`userName sw "${marker}" and (title eq "engineer" or title eq "Manager")`)).toEqual(both);
    expect(await ids(`userName sw "${marker}" and title ne "Engineer"`)).toEqual([b.id]);
    expect(await ids(`emails[type eq "work" and value co "${marker}.alice"]`)).toEqual([a.id]);
    expect(await ids(`emails.value co "${marker}.bob"`)).toEqual([b.id]);
    expect(await ids(`USERNAME SW "${marker}" AND Title PR`)).toEqual(both);
    expect(await ids(`userName sw "${marker}" and meta.created gt "2000-01-01T00:00:00Z"`)).toEqual(both);
    expect(await ids(`userName sw "${marker}" and meta.lastModified lt "2000-01-01T00:00:00Z"`)).toEqual([]);
    expect(await ids(`id eq "${a.id}"`)).toEqual([a.id]);
    expect(await ids(`userName gt "${marker}.b" and userName le "${marker}.c"`)).toEqual([b.id]);
  });

  it("answers Entra's random-GUID probe with 200 and an empty list", async () => {
    const res = await h.get(
      `/Users?filter=${encodeURIComponent('userName eq "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"')}`,
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ totalResults: 0, Resources: [], itemsPerPage: 0 });
  });

  it("projects attributes and excludedAttributes", async () => {
    const created = (await h.post("/Users", userBody({ [ENTERPRISE]: { department: "Ops" } }))).body;
    const only = await h.get(`/Users/${created.id}?attributes=userName,name.givenName,${ENTERPRISE}:department`);
    expect(only.body).toEqual({
      schemas: created.schemas,
      id: created.id,
      userName: created.userName,
      name: { givenName: "Given" },
      [ENTERPRISE]: { department: "Ops" },
    });
    const without = await h.get(`/Users/${created.id}?excludedAttributes=emails,name`);
    expect(without.body.emails).toBeUndefined();
    expect(without.body.name).toBeUndefined();
    expect(without.body.userName).toBe(created.userName);
    const filtered = await h.get(`/Users/${created.id}?attributes=${encodeURIComponent('emails[type eq "work"]')}`);
    expect(filtered.body.emails).toEqual(created.emails);
  });

  it("replaces a user with PUT (Okta sends the whole user)", async () => {
    const created = (await h.post("/Users", userBody({ title: "Old" }))).body;
    const res = await h.put(`/Users/${created.id}`, {
      ...userBody({ userName: created.userName }),
      id: created.id,
      active: false,
    });
    expect(res.status).toBe(200);
    expect(res.body.active).toBe(false);
    expect(res.body.title).toBeUndefined();
    expect(res.body.meta.version).toBe('W/"2"');
    expect(res.body.meta.created).toBe(created.meta.created);
  });

  it("patches with add, replace, remove, value-filter paths and path-less dotted and urn keys", async () => {
    const created = (await h.post("/Users", userBody())).body;
    const res = await h.patch(
      `/Users/${created.id}?attributes=userName,name,emails,title,${ENTERPRISE}:department,active`,
      {
        schemas: [PATCH_OP],
        Operations: [
          { op: "replace", path: 'emails[type eq "work"].value', value: "new@example.com" },
          { op: "add", path: "emails", value: [{ value: "home@example.com", type: "home" }] },
          { op: "add", path: "title", value: "Boss" },
          { op: "replace", value: { "name.givenName": "Renamed", [`${ENTERPRISE}:department`]: "R&D" } },
          { op: "remove", path: 'emails[type eq "home"]' },
          { op: "replace", path: "active", value: false },
        ],
      },
    );
    expect(res.status).toBe(200);
    expect(res.body.emails).toEqual([{ value: "new@example.com", type: "work", primary: true }]);
    expect(res.body.title).toBe("Boss");
    expect(res.body.name.givenName).toBe("Renamed");
    expect(res.body[ENTERPRISE].department).toBe("R&D");
    expect(res.body.active).toBe(false);
    const plain = await h.patch(`/Users/${created.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "remove", path: "title" }],
    });
    expect(plain.status).toBe(204);
    expect((await h.get(`/Users/${created.id}`)).body.title).toBeUndefined();
  });

  it("deletes with 204, then 404 for the second DELETE and for reads", async () => {
    const created = (await h.post("/Users", userBody())).body;
    expect((await h.del(`/Users/${created.id}`)).status).toBe(204);
    const again = await h.del(`/Users/${created.id}`);
    expect(again.status).toBe(404);
    expect(again.body.detail).toBeTruthy();
    expect((await h.get(`/Users/${created.id}`)).status).toBe(404);
    expect((await h.get(`/Users/010101001010101011001010101011`)).status).toBe(404);
  });

  it("24 concurrent PATCHes of one user each adding a phone number leave all 24 (no lost update)", async () => {
    const created = (await h.post("/Users", userBody())).body;
    const numbers = Array.from({ length: 24 }, (_, i) => `+1 555 01${String(i).padStart(2, "0")}`);
    const results = await Promise.all(
      numbers.map((value) =>
        h.patch(`/Users/${created.id}`, {
          schemas: [PATCH_OP],
          Operations: [{ op: "add", path: "phoneNumbers", value: [{ value, type: "work" }] }],
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(numbers.map(() => 204));
    const stored = (await h.get(`/Users/${created.id}`)).body;
    expect(stored.phoneNumbers.map((p: { value: string }) => p.value).sort()).toEqual(numbers);
    expect(stored.meta.version).toBe('W/"25"');
    expect((await dirtyMarks(h, [created.id])).size).toBe(1);
  });

  it("honours If-Match on writes", async () => {
    const created = (await h.post("/Users", userBody())).body;
    const stale = await h
      .patch(`/Users/${created.id}`, { Operations: [{ op: "replace", path: "title", value: "x" }] })
      .set("If-Match", 'W/"9"');
    expect(stale.status).toBe(412);
    const fresh = await h
      .patch(`/Users/${created.id}`, { Operations: [{ op: "replace", path: "title", value: "x" }] })
      .set("If-Match", 'W/"1"');
    expect(fresh.status).toBe(204);
  });
});
