import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  GROUP_SCHEMA,
  PATCH_OP,
  clearDirtyMarks,
  dirtyMarks,
  startScimHarness,
  userBody,
  type ScimHarness,
} from "../support/scimHarness.js";

describe("SCIM /Groups", () => {
  let h: ScimHarness;
  const users: string[] = [];
  beforeAll(async () => {
    h = await startScimHarness();
    for (let i = 0; i < 25; i++) users.push((await h.post("/Users", userBody())).body.id);
  });
  afterAll(async () => {
    await h?.close();
  });
  beforeEach(async () => {
    await clearDirtyMarks(h);
  });

  const memberIds = async (groupId: string) =>
    ((await h.get(`/Groups/${groupId}`)).body.members ?? []).map((m: { value: string }) => m.value).sort() as string[];

  it("creates a group with members, skipping ids that are not users", async () => {
    const res = await h.post("/Groups", {
      schemas: [GROUP_SCHEMA],
      displayName: "Sales",
      externalId: "okta-sales",
      members: [
        { value: users[0], display: "First" },
        { value: "not-a-user" },
        { value: "5f0c1a52-0000-4000-8000-000000000000" },
      ],
    });
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe(res.body.meta.location);
    expect(res.body.members).toEqual([
      { value: users[0], display: "First", type: "User", $ref: expect.stringContaining(`/Users/${users[0]}`) },
    ]);
    const marks = await dirtyMarks(h, [users[0]!]);
    expect(marks.get(users[0]!)).toMatchObject({ kind: "idp", method: "POST", resource: `Groups/${res.body.id}` });
  });

  it("lists and filters on displayName, externalId and members.value; excludedAttributes=members", async () => {
    const g = (
      await h.post("/Groups", { displayName: "Filterable", externalId: "ext-f", members: [{ value: users[1] }] })
    ).body;
    const byName = await h.get(`/Groups?filter=${encodeURIComponent('displayName eq "filterable"')}`);
    expect(byName.body.Resources.map((r: { id: string }) => r.id)).toEqual([g.id]);
    const byExt = await h.get(`/Groups?filter=${encodeURIComponent('externalId eq "ext-f"')}`);
    expect(byExt.body.totalResults).toBe(1);
    const byMember = await h.get(`/Groups?filter=${encodeURIComponent(`members.value eq "${users[1]}"`)}`);
    expect(byMember.body.Resources.map((r: { id: string }) => r.id)).toEqual([g.id]);
    const byMemberPath = await h.get(`/Groups?filter=${encodeURIComponent(`members[value eq "${users[1]}"]`)}`);
    expect(byMemberPath.body.totalResults).toBe(1);
    // Entra checks one membership this way before it adds or removes a member.
    const check = (user: string) =>
      h.get(
        `/Groups?excludedAttributes=members&filter=${encodeURIComponent(`id eq "${g.id}" and members[value eq "${user}"]`)}`,
      );
    expect((await check(users[1]!)).body.totalResults).toBe(1);
    expect((await check(users[2]!)).body.totalResults).toBe(0);
    const lean = await h.get(
      `/Groups?excludedAttributes=members&filter=${encodeURIComponent('displayName eq "Filterable"')}`,
    );
    expect(lean.body.Resources[0].members).toBeUndefined();
    expect(lean.body.Resources[0].displayName).toBe("Filterable");
    const single = await h.get(`/Groups/${g.id}?excludedAttributes=members`);
    expect(single.body.members).toBeUndefined();
  });

  it("PATCH adds, removes by filter, removes by value list and replaces (including [])", async () => {
    const g = (await h.post("/Groups", { displayName: "Patchable" })).body;
    const patch = (Operations: unknown[]) => h.patch(`/Groups/${g.id}`, { schemas: [PATCH_OP], Operations });
    expect(
      (
        await patch([
          { op: "add", path: "members", value: [{ value: users[2] }, { value: users[3] }, { value: users[4] }] },
        ])
      ).status,
    ).toBe(204);
    expect(await memberIds(g.id)).toEqual([users[2], users[3], users[4]].sort());
    expect((await patch([{ op: "remove", path: `members[value eq "${users[2]}"]` }])).status).toBe(204);
    expect(await memberIds(g.id)).toEqual([users[3], users[4]].sort());
    // Entra: remove with a value list
    expect((await patch([{ op: "Remove", path: "members", value: [{ value: users[3] }] }])).status).toBe(204);
    expect(await memberIds(g.id)).toEqual([users[4]]);
    expect(
      (await patch([{ op: "replace", path: "members", value: [{ value: users[5] }, { value: users[6] }] }])).status,
    ).toBe(204);
    expect(await memberIds(g.id)).toEqual([users[5], users[6]].sort());
    const marks = await dirtyMarks(h, users.slice(2, 7));
    expect([...marks.keys()].sort()).toEqual(users.slice(2, 7).sort());
    expect((await patch([{ op: "replace", path: "members", value: [] }])).status).toBe(204);
    expect(await memberIds(g.id)).toEqual([]);
  });

  it("Okta Push Groups: one PATCH with a rename plus member removes and adds; the rename marks every member", async () => {
    const g = (
      await h.post("/Groups", {
        displayName: "Push",
        members: [{ value: users[7] }, { value: users[8] }, { value: users[9] }],
      })
    ).body;
    await clearDirtyMarks(h);
    const res = await h.patch(`/Groups/${g.id}`, {
      schemas: [PATCH_OP],
      Operations: [
        { op: "replace", value: { id: g.id, displayName: "Push Renamed" } },
        { op: "remove", path: "members", value: [{ value: users[7], display: "x" }] },
        { op: "add", path: "members", value: [{ value: users[10], display: "y" }] },
      ],
    });
    expect(res.status).toBe(204);
    const after = (await h.get(`/Groups/${g.id}`)).body;
    expect(after.displayName).toBe("Push Renamed");
    expect(after.meta.version).toBe('W/"2"');
    expect(after.members.map((m: { value: string }) => m.value).sort()).toEqual([users[8], users[9], users[10]].sort());
    const marks = await dirtyMarks(h, users);
    // the removed member, the added one, and (for the rename) the ones who stayed
    expect([...marks.keys()].sort()).toEqual([users[7], users[8], users[9], users[10]].sort());
    expect(marks.get(users[8]!)).toMatchObject({ kind: "idp", method: "PATCH", resource: `Groups/${g.id}` });
    // Each user's mark says what happened to them, with the group's names as of this request.
    const group = { groupId: g.id, groupName: "Push Renamed" };
    expect(marks.get(users[8]!)!.change).toEqual({ what: "group-renamed", ...group, previousName: "Push" });
    expect(marks.get(users[7]!)!.change).toEqual({ what: "removed-from-group", ...group });
    expect(marks.get(users[10]!)!.change).toEqual({ what: "added-to-group", ...group });
  });

  it("a PATCH adding an id that is not a user is skipped, not a 400", async () => {
    const g = (await h.post("/Groups", { displayName: "Lenient" })).body;
    const res = await h.patch(`/Groups/${g.id}`, {
      schemas: [PATCH_OP],
      Operations: [
        {
          op: "add",
          path: "members",
          value: [{ value: "2b7e1c8e-1111-4222-8333-444455556666" }, { value: users[11] }, { value: "garbage" }],
        },
      ],
    });
    expect(res.status).toBe(204);
    expect(await memberIds(g.id)).toEqual([users[11]]);
  });

  it("20 concurrent PATCHes each adding a different member leave all 20", async () => {
    const g = (await h.post("/Groups", { displayName: "Concurrent" })).body;
    const twenty = users.slice(0, 20);
    const results = await Promise.all(
      twenty.map((id) =>
        h.patch(`/Groups/${g.id}`, {
          schemas: [PATCH_OP],
          Operations: [{ op: "add", path: "members", value: [{ value: id }] }],
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(twenty.map(() => 204));
    expect(await memberIds(g.id)).toEqual([...twenty].sort());
    expect((await h.get(`/Groups/${g.id}`)).body.meta.version).toBe('W/"21"');
    expect((await dirtyMarks(h, twenty)).size).toBe(20);
  });

  it("PUT replaces attributes and members; without members it leaves membership alone", async () => {
    const g = (await h.post("/Groups", { displayName: "Put", members: [{ value: users[12] }] })).body;
    await clearDirtyMarks(h);
    const res = await h.put(`/Groups/${g.id}`, {
      schemas: [GROUP_SCHEMA],
      displayName: "Put",
      members: [{ value: users[13] }],
    });
    expect(res.status).toBe(200);
    expect(res.body.members.map((m: { value: string }) => m.value)).toEqual([users[13]]);
    expect([...(await dirtyMarks(h, users)).keys()].sort()).toEqual([users[12], users[13]].sort());
    const renamed = await h.put(`/Groups/${g.id}`, { schemas: [GROUP_SCHEMA], displayName: "Put 2" });
    expect(renamed.status).toBe(200);
    expect(renamed.body.displayName).toBe("Put 2");
    expect(renamed.body.members.map((m: { value: string }) => m.value)).toEqual([users[13]]);
  });

  it("DELETE marks the members dirty, is 204, and a second DELETE is 404", async () => {
    const g = (
      await h.post("/Groups", { displayName: "Doomed", members: [{ value: users[14] }, { value: users[15] }] })
    ).body;
    await clearDirtyMarks(h);
    expect((await h.del(`/Groups/${g.id}`)).status).toBe(204);
    expect([...(await dirtyMarks(h, users)).keys()].sort()).toEqual([users[14], users[15]].sort());
    expect((await h.del(`/Groups/${g.id}`)).status).toBe(404);
    expect((await h.get(`/Groups/${g.id}`)).status).toBe(404);
  });
});
