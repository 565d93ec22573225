import { afterAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/clock.js";
import { adminApi, idp, startStack, type Stack } from "../support/stack.js";
import { accountsNamed, platformScim, requestsTo, SCIM_USER } from "./helpers.js";

/**
 * Adopted accounts (docs/reconciler.md, "Strip now, delete later"): an account already on the
 * platform, found after a 409 on create, is stripped when its user is deactivated and, by
 * default, kept for good; with RECONCILE_ON_ADOPTED_DEPROVISION=delete it is deleted after the
 * grace like the connector's own. Over HTTP with the emulator, the worker driven pass by pass on
 * a ManualClock.
 */

const SETTLE_MS = 5_000;
const GRACE_MS = 3_600_000;
const DELETE = "DELETE /scim/v2/Users/{id}";

async function adoptedThenDeactivated(onAdopted: "strip" | "delete" | undefined, userName: string) {
  const clock = new ManualClock();
  const env: Record<string, string> = {
    RECONCILE_SETTLE_MS: String(SETTLE_MS),
    RECONCILE_DEPROVISION_GRACE_MS: String(GRACE_MS),
    ADMIN_SESSION_IDLE_MINUTES: "1440",
  };
  if (onAdopted) env.RECONCILE_ON_ADOPTED_DEPROVISION = onAdopted;
  const stack = await startStack({ clock, workers: false, env });
  const worker = stack.service.reconciliation!.worker;
  const drain = async () => {
    while (await worker.runOnce());
  };
  // Someone made the account in the platform's own console before the connector knew the user.
  const made = await platformScim(stack.emulator.url).create({
    schemas: [SCIM_USER],
    userName,
    name: { givenName: "Pre", familyName: "Existing" },
    department: "engineering",
    permissions: { companyPermissions: [], appGroup: [] },
  });
  expect(made.status).toBe(201);
  const platformId = made.body.id as string;
  const marketing = await idp(stack).createGroup("Marketing");
  const id = await idp(stack).createUser(userName);
  await idp(stack).patch(`/Groups/${marketing}`, [{ op: "add", path: "members", value: [{ value: id }] }]);
  await drain();
  clock.advance(SETTLE_MS);
  await drain();
  const actions = async () =>
    (
      (await adminApi(stack)(`/log?user=${encodeURIComponent(userName)}&limit=100`)).body.entries as {
        action: string;
        outcome: string;
        note: string | null;
      }[]
    ).reverse();
  expect((await actions()).map((e) => e.action)).toContain("adopt");
  const [adopted] = await accountsNamed(stack, userName);
  expect(adopted).toMatchObject({ id: platformId, permissions: { appGroup: [{ appGroupName: "EU Production" }] } });

  await idp(stack).patch(`/Users/${id}`, [{ op: "replace", value: { active: false } }]);
  await drain(); // no clock move: the strip goes out at once
  const [stripped] = await accountsNamed(stack, userName);
  expect(stripped).toMatchObject({ id: platformId, permissions: { companyPermissions: [], appGroup: [] } });
  const deletesBefore = await requestsTo(stack, DELETE);
  return { stack, clock, drain, actions, platformId, deletesBefore };
}

describe("an adopted account whose user is deactivated", () => {
  const stacks: Stack[] = [];
  afterAll(async () => {
    for (const s of stacks) await s.close();
  });

  it("by default is stripped and kept, never deleted", async () => {
    const t = await adoptedThenDeactivated(undefined, "kept@example.com");
    stacks.push(t.stack);
    expect((await t.actions()).at(-1)?.note).toBe("access removed: deactivated in the IdP; adopted account kept");
    t.clock.advance(GRACE_MS * 3);
    await t.drain();
    expect(await accountsNamed(t.stack, "kept@example.com")).toMatchObject([
      { id: t.platformId, permissions: { companyPermissions: [], appGroup: [] } },
    ]);
    expect(await requestsTo(t.stack, DELETE)).toBe(t.deletesBefore);
    expect((await adminApi(t.stack)("/queue")).body.pendingDeletes).toEqual({ count: 0, nextAt: null });
  });

  it("with RECONCILE_ON_ADOPTED_DEPROVISION=delete is stripped, then deleted after the grace like the connector's own", async () => {
    const t = await adoptedThenDeactivated("delete", "gone@example.com");
    stacks.push(t.stack);
    expect((await t.actions()).at(-1)?.note).toMatch(/^access removed: deactivated in the IdP; account kept until /);
    t.clock.advance(GRACE_MS - 60_000);
    await t.drain();
    expect(await accountsNamed(t.stack, "gone@example.com")).toHaveLength(1);
    t.clock.advance(60_000 + 1_000);
    await t.drain();
    expect(await accountsNamed(t.stack, "gone@example.com")).toEqual([]);
    expect(await requestsTo(t.stack, DELETE)).toBe(t.deletesBefore + 1);
    expect((await t.actions()).at(-1)).toMatchObject({
      action: "deprovision",
      outcome: "succeeded",
      note: "account deleted after the grace",
    });
  });
});
