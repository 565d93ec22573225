import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  getUserForReconcile,
  listIdpUserIds,
  listUserIdsInGroupsNamed,
  listUsersWithGroups,
} from "../../src/db/idp/userReconcileReads.js";
import { ENTERPRISE, startScimHarness, userBody, type ScimHarness } from "../support/scimHarness.js";

/** The read side the reconciler uses: one user with their groups, and batches for resyncs. */
describe("IdP reads for the reconciler", () => {
  let h: ScimHarness;
  let alice: { id: string; userName: string };
  let bob: { id: string };
  let groups: { id: string }[];
  beforeAll(async () => {
    h = await startScimHarness();
    alice = (
      await h.post(
        "/Users",
        userBody({
          displayName: "Alice A",
          name: { givenName: "Alice", familyName: "A" },
          [ENTERPRISE]: { department: "Sales" },
        }),
      )
    ).body;
    bob = (await h.post("/Users", userBody({ active: false }))).body;
    groups = [
      (await h.post("/Groups", { displayName: "Zeta", externalId: "z-1", members: [{ value: alice.id }] })).body,
      (await h.post("/Groups", { displayName: "Alpha", members: [{ value: alice.id }, { value: bob.id }] })).body,
    ];
  });
  afterAll(async () => {
    await h?.close();
  });

  it("getUserForReconcile returns the user's fields and groups sorted by displayName", async () => {
    expect(await getUserForReconcile(h.service.db, alice.id)).toEqual({
      id: alice.id,
      userName: alice.userName,
      active: true,
      givenName: "Alice",
      familyName: "A",
      displayName: "Alice A",
      department: "Sales",
      groups: [
        { id: groups[1]!.id, displayName: "Alpha", externalId: null },
        { id: groups[0]!.id, displayName: "Zeta", externalId: "z-1" },
      ],
      assigned: [],
    });
  });

  it("getUserForReconcile is undefined for a deleted (or never existing) user, and works inside a transaction", async () => {
    expect(await getUserForReconcile(h.service.db, "6f1f0d7e-0000-4000-8000-000000000000")).toBeUndefined();
    expect(await getUserForReconcile(h.service.db, "not-a-uuid")).toBeUndefined();
    const inTx = await h.service.db.transaction((manager) => getUserForReconcile(manager, bob.id));
    expect(inTx).toMatchObject({ id: bob.id, active: false, groups: [{ displayName: "Alpha" }] });
  });

  it("listUsersWithGroups and listIdpUserIds page by id", async () => {
    const ids = [alice.id, bob.id].sort();
    const first = await listUsersWithGroups(h.service.db, undefined, 1);
    expect(first.map((u) => u.id)).toEqual([ids[0]]);
    const rest = await listUsersWithGroups(h.service.db, first[0]!.id, 10);
    expect(rest.map((u) => u.id)).toEqual([ids[1]]);
    expect(await listIdpUserIds(h.service.db, undefined, 10)).toEqual(ids);
    expect(await listUserIdsInGroupsNamed(h.service.db, ["zeta"])).toEqual([alice.id]);
  });
});
