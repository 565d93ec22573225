import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ADMIN_TOKEN,
  adminApi,
  emulatorState,
  idp,
  startStack,
  waitForQueueIdle,
  type Stack,
} from "../support/stack.js";

/**
 * The mass-deprovision breaker (minimum lowered to 3 with DEPROVISION_BREAKER_MIN): a wave of
 * removals is held for an admin instead of executed; approving all of them releases the wave.
 * The worker is driven pass by pass, so the wave is classified as a whole before it is worked.
 */
describe("mass-deprovision breaker", () => {
  let stack: Stack;
  const ids: string[] = [];
  let marketing: string;

  beforeAll(async () => {
    stack = await startStack({ env: { DEPROVISION_BREAKER_MIN: "3" }, workers: false });
  });
  afterAll(async () => stack?.close());

  const drain = async () => {
    while (await stack.service.reconciliation!.worker.runOnce()) {
      /* one classification pass and at most one reconcile per turn */
    }
  };
  const accounts = async () => (await emulatorState(stack)).dashboardUsers.map((u) => u.userName).sort();
  const userName = (i: number) => `wave${i}@example.com`;

  it("one deprovision below the threshold is carried out at once", async () => {
    const scim = idp(stack);
    for (let i = 0; i < 9; i++) ids.push(await scim.createUser(userName(i)));
    marketing = await scim.createGroup("Marketing", ids);
    await drain();
    expect(await accounts()).toHaveLength(9);
    await scim.patch(`/Users/${ids[8]}`, [{ op: "replace", value: { active: false } }]);
    await drain();
    expect(await accounts()).toHaveLength(8);
    expect((await adminApi(stack)("/approvals")).body.holds).toEqual([]);
  });

  it("a wave of 6 removals (members dropped from their only mapped group) is held, none executed", async () => {
    await idp(stack).patch(
      `/Groups/${marketing}`,
      ids.slice(0, 6).map((id) => ({ op: "remove", path: `members[value eq "${id}"]` })),
    );
    await drain();
    expect(await accounts()).toHaveLength(8);
    const holds = (await adminApi(stack)("/approvals")).body.holds as {
      userName: string;
      kind: string;
      decision: null;
    }[];
    expect(holds.map((h) => h.userName).sort()).toEqual(
      ids
        .slice(0, 6)
        .map((_, i) => userName(i))
        .sort(),
    );
    expect(holds.every((h) => h.kind === "deprovision" && h.decision === null)).toBe(true);
    const held = await adminApi(stack)("/log?action=hold&outcome=held");
    expect(held.body.entries).toHaveLength(6);
    expect(held.body.entries[0].note).toMatch(/mass-deprovision breaker/);
    expect(held.body.entries.every((e: { callsSpent: number }) => e.callsSpent === 0)).toBe(true);
  });

  it("approve-all releases the wave", async () => {
    const res = await request(stack.service.url)
      .post("/admin/api/approvals/all/approve")
      .set("Authorization", `Bearer ${ADMIN_TOKEN}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ decided: 6 });
    await drain();
    expect(await accounts()).toEqual([userName(6), userName(7)]);
    expect((await adminApi(stack)("/approvals")).body.holds).toEqual([]);
    const approved = await adminApi(stack)("/log?action=approve");
    expect(approved.body.entries).toHaveLength(6);
    const done = await adminApi(stack)("/log?action=deprovision&outcome=succeeded");
    expect(done.body.entries).toHaveLength(7);
  });
});

describe("mass-deprovision breaker with live workers", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { DEPROVISION_BREAKER_MIN: "3" } });
  });
  afterAll(async () => stack?.close());

  it("holds the whole wave when it arrives in one IdP request, whichever loop picks it up", async () => {
    const scim = idp(stack);
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push(await scim.createUser(`live${i}@example.com`));
    const group = await scim.createGroup("Marketing", ids);
    await waitForQueueIdle(stack);
    expect((await emulatorState(stack)).dashboardUsers).toHaveLength(8);
    // Each loop classifies every unclassified row before it claims one, so the wave is seen whole.
    await scim.patch(
      `/Groups/${group}`,
      ids.slice(0, 6).map((id) => ({ op: "remove", path: `members[value eq "${id}"]` })),
    );
    await waitForQueueIdle(stack);
    expect((await emulatorState(stack)).dashboardUsers).toHaveLength(8);
    expect((await adminApi(stack)("/approvals")).body.holds).toHaveLength(6);
  });
});
