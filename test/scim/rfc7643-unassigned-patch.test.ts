import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ENTERPRISE,
  GROUP_SCHEMA,
  PATCH_OP,
  USER_SCHEMA,
  startScimHarness,
  userBody,
  type ScimHarness,
} from "../support/scimHarness.js";

/**
 * RFC 7643 §2.5 (unassigned attributes are omitted), RFC 7644 §3.5.2 (PATCH on a whole extension,
 * remove of `active`) and §3.9 (attributes/excludedAttributes on POST, PUT and PATCH responses).
 */

describe("RFC 7643 §2.5 unassigned attributes, RFC 7644 §3.5.2 PATCH and §3.9 projection on writes", () => {
  let h: ScimHarness;
  beforeAll(async () => {
    h = await startScimHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  const patch = (path: string, Operations: unknown[], query = "") =>
    h.patch(`${path}${query}`, { schemas: [PATCH_OP], Operations });
  const newUser = async (overrides: Record<string, unknown> = {}) =>
    (await h.post("/Users", userBody(overrides))).body as { id: string };

  it("§2.5: a group whose members are all removed comes back without `members`", async () => {
    const user = await newUser();
    const group = (
      await h.post("/Groups", { schemas: [GROUP_SCHEMA], displayName: "Emptied", members: [{ value: user.id }] })
    ).body;
    expect(group.members).toHaveLength(1);
    expect((await patch(`/Groups/${group.id}`, [{ op: "remove", path: "members" }])).status).toBe(204);
    const read = await h.get(`/Groups/${group.id}`);
    expect(read.body).not.toHaveProperty("members");
    const listed = await h.get(`/Groups?filter=${encodeURIComponent(`id eq "${group.id}"`)}`);
    expect(listed.body.Resources[0]).not.toHaveProperty("members");
    const created = await h.post("/Groups", { schemas: [GROUP_SCHEMA], displayName: "Born empty", members: [] });
    expect(created.body).not.toHaveProperty("members");
  });

  it("§2.5: emptied multi-valued and complex attributes disappear; null and [] unassign in PUT and PATCH", async () => {
    const user = await newUser({ phoneNumbers: [{ value: "+15555550100", type: "work" }], nickName: "nick" });
    const removed = await patch(
      `/Users/${user.id}`,
      [{ op: "remove", path: 'phoneNumbers[type eq "work"]' }],
      "?attributes=phoneNumbers,userName",
    );
    expect(removed.status).toBe(200);
    expect(removed.body).not.toHaveProperty("phoneNumbers");
    expect(
      (
        await patch(`/Users/${user.id}`, [
          { op: "replace", path: "emails", value: [] },
          { op: "replace", path: "nickName", value: null },
        ])
      ).status,
    ).toBe(204);
    const read = (await h.get(`/Users/${user.id}`)).body;
    expect(read).not.toHaveProperty("emails");
    expect(read).not.toHaveProperty("nickName");
    // Removing the only sub-attributes of `name` leaves no empty object behind.
    await patch(`/Users/${user.id}`, [
      { op: "remove", path: "name.givenName" },
      { op: "remove", path: "name.familyName" },
    ]);
    expect((await h.get(`/Users/${user.id}`)).body).not.toHaveProperty("name");
    const put = await h.put(`/Users/${user.id}`, {
      schemas: [USER_SCHEMA],
      userName: read.userName,
      emails: [],
      phoneNumbers: null,
      addresses: [{}],
    });
    expect(put.status).toBe(200);
    for (const name of ["emails", "phoneNumbers", "addresses"]) expect(put.body).not.toHaveProperty(name);
  });

  it("§3.5.2: add/replace with the enterprise extension's URN as path and an object value (which may carry schemas)", async () => {
    const user = await newUser();
    const added = await patch(
      `/Users/${user.id}`,
      [
        {
          op: "add",
          path: ENTERPRISE,
          value: { schemas: [ENTERPRISE], employeeNumber: "701", department: "Sales", manager: { value: "m-1" } },
        },
      ],
      `?attributes=${ENTERPRISE}`,
    );
    expect(added.status).toBe(200);
    expect(added.body[ENTERPRISE]).toEqual({ employeeNumber: "701", department: "Sales", manager: { value: "m-1" } });
    // replace names only department: the other sub-attributes stay (RFC 7644 3.5.2.3).
    await patch(`/Users/${user.id}`, [
      { op: "replace", path: ENTERPRISE, value: { schemas: [ENTERPRISE], department: "Support" } },
    ]);
    const read = (await h.get(`/Users/${user.id}`)).body;
    expect(read[ENTERPRISE]).toMatchObject({ employeeNumber: "701", department: "Support" });
    expect(read.schemas).toContain(ENTERPRISE);
    const withoutExtension = (await h.get(`/Users/${user.id}?excludedAttributes=${ENTERPRISE}`)).body;
    expect(withoutExtension).not.toHaveProperty(ENTERPRISE);
    expect(withoutExtension.schemas).toEqual([USER_SCHEMA]);
    const found = await h.get(`/Users?filter=${encodeURIComponent(`${ENTERPRISE}:department eq "Support"`)}`);
    expect(found.body.Resources.map((u: { id: string }) => u.id)).toContain(user.id);
    // A path-less replace carrying the extension with a `schemas` member is accepted too.
    expect(
      (
        await patch(`/Users/${user.id}`, [
          { op: "replace", value: { [ENTERPRISE]: { schemas: [ENTERPRISE], costCenter: "42" } } },
        ])
      ).status,
    ).toBe(204);
    expect((await h.get(`/Users/${user.id}`)).body[ENTERPRISE].costCenter).toBe("42");
    expect((await patch(`/Users/${user.id}`, [{ op: "add", path: ENTERPRISE, value: "Sales" }])).body.scimType).toBe(
      "invalidValue",
    );
  });

  it("§3.5.2.2: remove of the whole enterprise extension unassigns it (and its indexed department)", async () => {
    const user = await newUser({
      schemas: [USER_SCHEMA, ENTERPRISE],
      [ENTERPRISE]: { department: "Gone", employeeNumber: "9" },
    });
    const res = await patch(`/Users/${user.id}`, [{ op: "remove", path: ENTERPRISE }]);
    expect(res.status).toBe(204);
    const read = (await h.get(`/Users/${user.id}`)).body;
    expect(read).not.toHaveProperty(ENTERPRISE);
    expect(read.schemas).toEqual([USER_SCHEMA]);
    const found = await h.get(`/Users?filter=${encodeURIComponent(`${ENTERPRISE}:department eq "Gone"`)}`);
    expect(found.body.totalResults).toBe(0);
  });

  it("§3.5.2.2: remove of `active` (or null) is a 400 mutability that says why, and leaves the user as it was", async () => {
    const user = await newUser({ active: false });
    for (const op of [
      { op: "remove", path: "active" },
      { op: "replace", path: "active", value: null },
    ]) {
      const res = await patch(`/Users/${user.id}`, [op]);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ scimType: "mutability", status: "400" });
      expect(res.body.detail).toMatch(/'active' cannot be removed.*replace it with true or false/);
    }
    expect((await h.get(`/Users/${user.id}`)).body.active).toBe(false);
  });

  it("§3.9: attributes and excludedAttributes shape POST, PUT and PATCH responses as they shape GET", async () => {
    const posted = await h.post("/Users?attributes=userName,emails.value", userBody({ displayName: "Shown?" }));
    expect(posted.status).toBe(201);
    expect(Object.keys(posted.body).sort()).toEqual(["emails", "id", "schemas", "userName"]);
    expect(posted.body.emails[0]).toEqual({ value: posted.body.userName });
    const get = await h.get(`/Users/${posted.body.id}?attributes=userName,emails.value`);
    expect(get.body).toEqual(posted.body);
    const put = await h.put(`/Users/${posted.body.id}?excludedAttributes=emails,name,meta`, {
      schemas: [USER_SCHEMA],
      userName: posted.body.userName,
      displayName: "Put",
      emails: [{ value: "x@example.com" }],
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ displayName: "Put" });
    expect(put.body).not.toHaveProperty("emails");
    expect(put.body).not.toHaveProperty("meta");
    const patched = await patch(
      `/Users/${posted.body.id}`,
      [{ op: "replace", path: "displayName", value: "Patched" }],
      "?attributes=displayName",
    );
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual({ schemas: [USER_SCHEMA], id: posted.body.id, displayName: "Patched" });
    const user = await newUser();
    const group = await h.post("/Groups?excludedAttributes=members", {
      schemas: [GROUP_SCHEMA],
      displayName: "Projected",
      members: [{ value: user.id }],
    });
    expect(group.status).toBe(201);
    expect(group.body).not.toHaveProperty("members");
    const groupPatch = await patch(
      `/Groups/${group.body.id}`,
      [{ op: "replace", path: "displayName", value: "Projected 2" }],
      "?attributes=displayName",
    );
    expect(groupPatch.body).toEqual({ schemas: [GROUP_SCHEMA], id: group.body.id, displayName: "Projected 2" });
    const groupPut = await h.put(`/Groups/${group.body.id}?attributes=members`, {
      schemas: [GROUP_SCHEMA],
      displayName: "Projected 3",
    });
    expect(groupPut.body.members.map((m: { value: string }) => m.value)).toEqual([user.id]);
    expect(groupPut.body).not.toHaveProperty("displayName");
  });
});
