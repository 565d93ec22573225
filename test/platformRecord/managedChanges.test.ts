import request from "supertest";
import { afterEach, describe, expect, it } from "vitest";
import {
  adminApi,
  emulatorState,
  emulatorStats,
  idp,
  startStack,
  waitForQueueIdle,
  type Stack,
} from "../support/stack.js";
import { BY_HAND } from "../support/drift.js";
import { onManagedAccountEvent, type ManagedChangesDeps } from "../../src/platformRecord/managedChanges.js";
import type { PlatformEventKind } from "../../src/platformRecord/events.js";
import type { StoredPlatformEvent } from "../../src/db/platform/recordRepository.js";
import { userDetail } from "../../src/admin/users/users.js";
import type { AdminDataDeps } from "../../src/admin/deps.js";
import { systemClock } from "../../src/clock.js";
import { triggerLabel } from "../../src/vocabulary/reconcile.js";

/**
 * Changes the platform's record reports on accounts the connector manages (issue 44, section 3):
 * the platform side is the emulator over HTTP, changed behind the connector's back through its
 * own SCIM API with another token; calls are counted on the emulator and in the budget ledger.
 */

const ACTOR = "ops-admin@example.com";
let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

function depsOf(s: Stack, outsideChanges: "revert" | "report"): ManagedChangesDeps {
  const { deps } = s.service.reconciliation!.reconciler;
  return { db: deps.db, clock: deps.clock, outsideChanges, source: deps.source };
}

function eventOf(kind: PlatformEventKind, name: string, at = new Date()): StoredPlatformEvent {
  return { id: "1", at, actor: ACTOR, event: name, kind, account: "ann@example.com", ip: null, details: null };
}

/** ann in Marketing, provisioned through the connector. */
async function provisionAnn(s: Stack): Promise<string> {
  const scim = idp(s);
  const ann = await scim.createUser("ann@example.com");
  await scim.createGroup("Marketing", [ann]);
  await waitForQueueIdle(s);
  return ann;
}

const annOnPlatform = async (s: Stack) =>
  (await emulatorState(s)).dashboardUsers.find((u) => u.userName === "ann@example.com");

/** Someone grants ann company admin and export_user_data in EU Production on the platform. */
async function grantByHand(s: Stack): Promise<void> {
  const ann = (await annOnPlatform(s))!;
  const appGroup = ann.permissions.appGroup.map((g: { appGroupName: string; appGroupPermissions: string[] }) =>
    g.appGroupName === "EU Production"
      ? { ...g, appGroupPermissions: [...g.appGroupPermissions, "export_user_data"] }
      : g,
  );
  const res = await request(s.emulator.url)
    .put(`/scim/v2/Users/${ann.id}`)
    .set(BY_HAND)
    .send({
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
      userName: ann.userName,
      name: ann.name,
      department: ann.department,
      permissions: { companyPermissions: ["admin"], appGroup },
    });
  expect(res.status).toBe(200);
}

/** What the platform answered and the ledger debited since `before`. */
async function spentSince(s: Stack, before: Awaited<ReturnType<typeof counters>>) {
  const now = await counters(s);
  const delta = (key: string) => (now.requests[key] ?? 0) - (before.requests[key] ?? 0);
  return {
    get: delta("GET /scim/v2/Users/{id}"),
    put: delta("PUT /scim/v2/Users/{id}"),
    post: delta("POST /scim/v2/Users"),
    search: delta("GET /scim/v2/Users"),
    ledger: now.debits.slice(before.debits.length).map((d) => d.action),
  };
}

async function counters(s: Stack) {
  const { requests } = await emulatorStats(s);
  const debits = (await s.service.db.query(`SELECT action FROM budget_debits ORDER BY id`)) as { action: string }[];
  return { requests: requests as Record<string, number>, debits };
}

/** The admin user page's data, as the page renders it. */
async function userPage(s: Stack, userId: string) {
  const deps = { db: s.service.db, clock: systemClock, desired: s.service.desired } as unknown as AdminDataDeps;
  return (await userDetail(deps, userId))!;
}

/** What woke each entry of `action`, newest first, in the log's words. */
async function triggersOf(s: Stack, action: string): Promise<string[]> {
  const res = await adminApi(s)(`/log?action=${action}`);
  return res.body.entries.map((e: { trigger: unknown }) => triggerLabel(e.trigger));
}

const hhmm = (at: Date) => at.toISOString().slice(11, 16);

async function driftNotes(s: Stack): Promise<{ outcome: string; note: string | null }[]> {
  const res = await adminApi(s)("/log?action=drift");
  expect(res.status).toBe(200);
  return res.body.entries;
}

describe("PLATFORM_OUTSIDE_CHANGES=revert", () => {
  it("permissions changed in the dashboard: one GET, one PUT, the mapping's grants back, the log says who and what", async () => {
    // Whatever a resync's verification may do (report drift only; no budget left to verify at all):
    // an outside change is an access change, put back at the priority of one.
    stack = await startStack({ env: { RESYNC_DRIFT: "report", RESYNC_VERIFY_HEADROOM_PERCENT: "90" } });
    const annId = await provisionAnn(stack);
    const granted = JSON.stringify((await annOnPlatform(stack))!.permissions);
    await grantByHand(stack);
    const before = await counters(stack);
    const at = new Date();

    const outcome = await onManagedAccountEvent(
      depsOf(stack, "revert"),
      eventOf("permissions-changed", "Updated Account Permission", at),
      annId,
    );
    expect(outcome).toBe("check-queued");
    await waitForQueueIdle(stack);

    expect(JSON.stringify((await annOnPlatform(stack))!.permissions)).toBe(granted);
    expect(await spentSince(stack, before)).toEqual({
      get: 1,
      put: 1,
      post: 0,
      search: 0,
      ledger: ["verify", "update"],
    });
    const [drift] = await driftNotes(stack);
    expect(drift).toMatchObject({
      outcome: "enforced",
      note: `changed in the platform's dashboard by ${ACTOR} at ${hhmm(at)} UTC; removed again: admin, EU Production: export_user_data`,
    });
    expect(await triggersOf(stack, "update")).toEqual([
      `changed in the platform's dashboard by ${ACTOR} at ${hhmm(at)} UTC`,
    ]);
  });

  it("an account removed by hand is created again with one POST, found at no call", async () => {
    stack = await startStack();
    const annId = await provisionAnn(stack);
    const granted = JSON.stringify((await annOnPlatform(stack))!.permissions);
    const ann = (await annOnPlatform(stack))!;
    expect((await request(stack.emulator.url).delete(`/scim/v2/Users/${ann.id}`).set(BY_HAND)).status).toBe(204);
    const before = await counters(stack);
    const at = new Date();

    const outcome = await onManagedAccountEvent(
      depsOf(stack, "revert"),
      eventOf("account-removed", "Removed Account", at),
      annId,
    );
    expect(outcome).toBe("recreate-queued");
    await waitForQueueIdle(stack);

    expect(JSON.stringify((await annOnPlatform(stack))!.permissions)).toBe(granted);
    expect(await spentSince(stack, before)).toEqual({ get: 0, put: 0, post: 1, search: 0, ledger: ["create"] });
    expect(await driftNotes(stack)).toMatchObject([
      {
        outcome: "enforced",
        note: `removed in the platform's dashboard by ${ACTOR} at ${hhmm(at)} UTC; created again`,
      },
    ]);
    expect((await triggersOf(stack, "create"))[0]).toBe(
      `removed in the platform's dashboard by ${ACTOR} at ${hhmm(at)} UTC`,
    );
  });

  it("an event older than the connector's last write of the account spends nothing", async () => {
    stack = await startStack();
    const annId = await provisionAnn(stack);
    const before = await counters(stack);
    const outcome = await onManagedAccountEvent(
      depsOf(stack, "revert"),
      eventOf("permissions-changed", "Updated Account Permission", new Date(Date.now() - 3_600_000)),
      annId,
    );
    expect(outcome).toBe("superseded");
    await waitForQueueIdle(stack);
    expect(await spentSince(stack, before)).toEqual({ get: 0, put: 0, post: 0, search: 0, ledger: [] });
  });
});

describe("PLATFORM_OUTSIDE_CHANGES=report", () => {
  it("reads the account once, writes nothing, keeps the change and shows it; an IdP change later keeps it too", async () => {
    stack = await startStack({ env: { PLATFORM_OUTSIDE_CHANGES: "report" } });
    const annId = await provisionAnn(stack);
    await grantByHand(stack);
    const tampered = JSON.stringify((await annOnPlatform(stack))!.permissions);
    const before = await counters(stack);
    const at = new Date();

    expect(
      await onManagedAccountEvent(
        depsOf(stack, "report"),
        eventOf("permissions-changed", "Updated Account Permission", at),
        annId,
      ),
    ).toBe("check-queued");
    await waitForQueueIdle(stack);

    expect(JSON.stringify((await annOnPlatform(stack))!.permissions)).toBe(tampered);
    expect(await spentSince(stack, before)).toEqual({ get: 1, put: 0, post: 0, search: 0, ledger: ["verify"] });
    expect(await driftNotes(stack)).toMatchObject([
      {
        outcome: "reported",
        note: `changed in the platform's dashboard by ${ACTOR} at ${hhmm(at)} UTC; kept (PLATFORM_OUTSIDE_CHANGES=report): granted in the dashboard: admin, EU Production: export_user_data`,
      },
    ]);
    expect((await userPage(stack, annId)).platform?.outside).toBe(
      `granted in the dashboard by ${ACTOR} at ${at.toISOString()}: admin, EU Production: export_user_data`,
    );

    // The access review marks the two grants given in the dashboard, and only those.
    const review = await adminApi(stack)("/access?user=ann@example.com");
    const outside = review.body.rows.filter((r: { outside: string | null }) => r.outside);
    expect(outside.map((r: { permission: string }) => r.permission).sort()).toEqual(["admin", "export_user_data"]);
    expect(outside[0].outside).toMatch(/^granted in the dashboard by ops-admin@example.com at /);

    // A later IdP change (a new first name) PUTs the account with what was granted in the dashboard in it.
    await idp(stack).patch(`/Users/${annId}`, [{ op: "replace", path: "name.givenName", value: "Annie" }]);
    await waitForQueueIdle(stack);
    const now = (await annOnPlatform(stack))!;
    expect(now.name.givenName).toBe("Annie");
    expect(now.permissions.companyPermissions).toEqual(["admin"]);
    expect(now.permissions.appGroup[0].appGroupPermissions.sort()).toEqual([
      "basic_access",
      "export_user_data",
      "send_campaigns_canvases",
    ]);
  });

  it("an account removed by hand is only shown", async () => {
    stack = await startStack({ env: { PLATFORM_OUTSIDE_CHANGES: "report" } });
    const annId = await provisionAnn(stack);
    const ann = (await annOnPlatform(stack))!;
    expect((await request(stack.emulator.url).delete(`/scim/v2/Users/${ann.id}`).set(BY_HAND)).status).toBe(204);
    const before = await counters(stack);
    const at = new Date();
    expect(
      await onManagedAccountEvent(depsOf(stack, "report"), eventOf("account-removed", "Removed Account", at), annId),
    ).toBe("reported");
    await waitForQueueIdle(stack);
    expect(await annOnPlatform(stack)).toBeUndefined();
    expect(await spentSince(stack, before)).toEqual({ get: 0, put: 0, post: 0, search: 0, ledger: [] });
    expect((await userPage(stack, annId)).platform?.outside).toBe(
      `removed in the platform's dashboard by ${ACTOR} at ${at.toISOString()}`,
    );
  });
});
