import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ENTERPRISE,
  PATCH_OP,
  clearDirtyMarks,
  dirtyMarks,
  startScimHarness,
  userBody,
  type ScimHarness,
} from "../support/scimHarness.js";

/** What Entra ID and Okta really send, end to end. */
describe("IdP quirks", () => {
  let h: ScimHarness;
  beforeAll(async () => {
    h = await startScimHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  const patch = (id: string, Operations: unknown[]) => h.patch(`/Users/${id}`, { schemas: [PATCH_OP], Operations });
  const read = async (id: string) => (await h.get(`/Users/${id}`)).body;

  describe("Entra ID (default, without aadOptscim062020)", () => {
    it('accepts "Replace"/"Add"/"Remove" ops and "True"/"False" booleans', async () => {
      const user = (await h.post("/Users", userBody())).body;
      expect((await patch(user.id, [{ op: "Replace", path: "active", value: "False" }])).status).toBe(204);
      expect((await read(user.id)).active).toBe(false);
      expect((await patch(user.id, [{ op: "Replace", path: "active", value: "True" }])).status).toBe(204);
      expect((await read(user.id)).active).toBe(true);
      expect(
        (await patch(user.id, [{ op: "Add", path: 'emails[type eq "work"].primary', value: "False" }])).status,
      ).toBe(204);
      expect((await read(user.id)).emails[0].primary).toBe(false);
      expect((await patch(user.id, [{ op: "Replace", value: { active: "False" } }])).status).toBe(204);
      expect((await read(user.id)).active).toBe(false);
    });

    it('takes "True" in a POST body too', async () => {
      const res = await h.post("/Users", userBody({ active: "True" }));
      expect(res.status).toBe(201);
      expect(res.body.active).toBe(true);
    });

    it('sets manager from a bare id string and removes it with ""', async () => {
      const user = (await h.post("/Users", userBody())).body;
      const managerPath = `${ENTERPRISE}:manager`;
      expect((await patch(user.id, [{ op: "Add", path: managerPath, value: "boss-id-123" }])).status).toBe(204);
      expect((await read(user.id))[ENTERPRISE]).toEqual({ manager: { value: "boss-id-123" } });
      expect((await patch(user.id, [{ op: "Replace", path: managerPath, value: "" }])).status).toBe(204);
      expect((await read(user.id))[ENTERPRISE]?.manager).toBeUndefined();
      expect(
        (await patch(user.id, [{ op: "Replace", path: managerPath, value: { value: "other-boss" } }])).status,
      ).toBe(204);
      expect((await read(user.id))[ENTERPRISE].manager).toEqual({ value: "other-boss" });
      expect((await patch(user.id, [{ op: "Remove", path: managerPath }])).status).toBe(204);
      expect((await read(user.id))[ENTERPRISE]?.manager).toBeUndefined();
    });

    it('creates the work email when replacing emails[type eq "work"].value on a user without one', async () => {
      const user = (await h.post("/Users", userBody({ emails: [] }))).body;
      expect(
        (await patch(user.id, [{ op: "Replace", path: 'emails[type eq "work"].value', value: "w@example.com" }]))
          .status,
      ).toBe(204);
      expect((await read(user.id)).emails).toEqual([{ type: "work", value: "w@example.com" }]);
    });

    it("ignores the aadOptscim062020 flag when Entra carries it in the URL", async () => {
      const created = await h.post("/Users?aadOptscim062020", userBody());
      expect(created.status).toBe(201);
      const listed = await h.get(
        `/Users?aadOptscim062020&filter=${encodeURIComponent(`userName eq "${created.body.userName}"`)}`,
      );
      expect(listed.body.totalResults).toBe(1);
    });

    it("answers the random-GUID probe filter with 200 and an empty list", async () => {
      const res = await h.get(
        `/Users?filter=${encodeURIComponent('userName eq "3e8d5f9a-7c21-4b0e-9f44-2a1d6c8b7e55"')}`,
      );
      expect(res.status).toBe(200);
      expect(res.body.totalResults).toBe(0);
      expect(res.body.Resources).toEqual([]);
    });
  });

  describe("Okta", () => {
    it('deactivates with a path-less replace {"active": false} and marks the user dirty', async () => {
      const user = (await h.post("/Users", userBody())).body;
      await clearDirtyMarks(h);
      const res = await patch(user.id, [{ op: "replace", value: { active: false } }]);
      expect(res.status).toBe(204);
      expect((await read(user.id)).active).toBe(false);
      expect((await dirtyMarks(h, [user.id])).get(user.id)).toMatchObject({
        kind: "idp",
        method: "PATCH",
        resource: `Users/${user.id}`,
      });
      const [row] = await h.service.db.query(`SELECT active FROM idp_users WHERE id = $1`, [user.id]);
      expect(row.active).toBe(false);
    });

    it("PUTs the whole user (profile push and deactivation)", async () => {
      const body = userBody({ [ENTERPRISE]: { department: "Eng" } });
      const user = (await h.post("/Users", body)).body;
      const res = await h.put(`/Users/${user.id}`, {
        ...body,
        id: user.id,
        active: false,
        name: { givenName: "New", familyName: "Name" },
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        active: false,
        name: { givenName: "New", familyName: "Name" },
        [ENTERPRISE]: { department: "Eng" },
      });
      const [row] = await h.service.db.query(
        `SELECT given_name, family_name, active, department FROM idp_users WHERE id = $1`,
        [user.id],
      );
      expect(row).toEqual({ given_name: "New", family_name: "Name", active: false, department: "Eng" });
    });

    it("accepts path-less replace with dotted and urn keys", async () => {
      const user = (await h.post("/Users", userBody())).body;
      const res = await patch(user.id, [
        {
          op: "replace",
          value: {
            "name.familyName": "Dotted",
            [`${ENTERPRISE}:department`]: "Urn",
            [ENTERPRISE]: { costCenter: "CC" },
          },
        },
      ]);
      expect(res.status).toBe(204);
      const after = await read(user.id);
      expect(after.name.familyName).toBe("Dotted");
      expect(after[ENTERPRISE]).toEqual({ department: "Urn", costCenter: "CC" });
    });
  });

  it("marks the user dirty on create, replace and delete", async () => {
    await clearDirtyMarks(h);
    const user = (await h.post("/Users", userBody())).body;
    expect((await dirtyMarks(h, [user.id])).get(user.id)).toMatchObject({ kind: "idp", method: "POST" });
    await h.put(`/Users/${user.id}`, userBody({ userName: user.userName }));
    expect((await dirtyMarks(h, [user.id])).get(user.id)).toMatchObject({ kind: "idp", method: "PUT" });
    await h.del(`/Users/${user.id}`);
    expect((await dirtyMarks(h, [user.id])).get(user.id)).toMatchObject({ kind: "idp", method: "DELETE" });
  });

  it("names what a PUT did to the user on its mark: deactivated, reactivated, updated; with If-Match too", async () => {
    const user = (await h.post("/Users", userBody())).body;
    const put = async (active: boolean, headers: Record<string, string> = {}) => {
      const res = await h.put(`/Users/${user.id}`, userBody({ userName: user.userName, active })).set(headers);
      expect(res.status).toBe(200);
      return (await dirtyMarks(h, [user.id])).get(user.id)?.change;
    };
    expect(await put(false)).toEqual({ what: "user-deactivated" });
    expect(await put(false)).toEqual({ what: "user-updated" });
    expect(await put(true)).toEqual({ what: "user-reactivated" });
    expect(await put(false, { "if-match": "*" })).toEqual({ what: "user-deactivated" });
    expect(await put(true, { "if-match": "*" })).toEqual({ what: "user-reactivated" });
  });

  it("does not mark anyone when the write fails", async () => {
    const user = (await h.post("/Users", userBody())).body;
    await clearDirtyMarks(h);
    const bad = await patch(user.id, [{ op: "replace", path: "active", value: "maybe" }]);
    expect(bad.status).toBe(400);
    expect((await dirtyMarks(h, [user.id])).size).toBe(0);
  });
});
