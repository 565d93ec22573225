import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/clock.js";
import { analysePending, type AnalysisDeps } from "../../src/platformRecord/findings.js";
import { idp, startStack, type Stack } from "../support/stack.js";
import { accountsNamed, idpUserId, platformScim, requestsTo, SCIM_USER } from "../reconcile/helpers.js";
import {
  discoverDebits,
  insertEvents,
  outcomesOf,
  recordingHandlers,
  unmanagedAlerts,
  unmanagedRow,
} from "./helpers.js";

/**
 * The platform's record analysed (docs/platform-record.md): the connector's own writes, made by
 * reconciling users against the emulator over HTTP, are recognised from its ledger and never
 * flagged; an account made on the emulator directly is a candidate, confirmed by exactly one lookup
 * (counted by the emulator and in the ledger) and alerted once. Events go in as an import leaves
 * them; the handlers of managed accounts are recorded stand-ins.
 */

const LOOKUP = "GET /scim/v2/Users";
const MINUTE = 60_000;

describe("the platform's record: own writes and accounts made by hand", () => {
  let stack: Stack;
  const clock = new ManualClock();
  const recorded = recordingHandlers();
  let deps: AnalysisDeps;
  const drain = async () => {
    while (await stack.service.reconciliation!.worker.runOnce());
  };
  const discovery = () => stack.service.discovery!;
  let addedAt: Date;

  beforeAll(async () => {
    stack = await startStack({ clock, workers: false });
    deps = { db: stack.service.db, clock, handlers: recorded.handlers, policy: { ownWriteWindowMinutes: 10 } };
  });
  afterAll(async () => {
    await stack?.close();
  });

  it("never flags the connector's own create, strip or delete, nor lists the account as unmanaged", async () => {
    const marketing = await idp(stack).createGroup("Marketing");
    const id = await idp(stack).createUser("own@example.com");
    await idp(stack).patch(`/Groups/${marketing}`, [{ op: "add", path: "members", value: [{ value: id }] }]);
    await drain();
    expect(await accountsNamed(stack, "own@example.com")).toHaveLength(1);
    const createdAt = clock.now();
    clock.advance(3 * MINUTE);
    // The IdP deletes the user: the connector deletes the account (the grace is 0 in tests).
    await idp(stack).send("delete", `/Users/${id}`);
    await drain();
    expect(await accountsNamed(stack, "own@example.com")).toEqual([]);
    const removedAt = clock.now();
    // The record as the platform writes it, its clock a little off the connector's, its actor for API writes unknown.
    await insertEvents(stack.database.db, [
      { at: new Date(createdAt.getTime() + 40_000), actor: "API", event: "Added Account", account: "own@example.com" },
      {
        at: new Date(createdAt.getTime() + 41_000),
        actor: "API",
        event: "Updated Account Permission",
        account: "own@example.com",
      },
      {
        at: new Date(removedAt.getTime() - 20_000),
        actor: "API",
        event: "Removed Account",
        account: "own@example.com",
      },
    ]);
    const findings = await analysePending(deps);
    expect(findings).toMatchObject({ ownWrites: 3, candidates: 0, outsideChanges: 0, removedByHand: 0 });
    expect(await outcomesOf(stack.database.db, "own@example.com")).toEqual(["own-write", "own-write", "own-write"]);
    expect(await unmanagedRow(stack.database.db, "own@example.com")).toBeUndefined();
    expect(recorded.calls.managed).toEqual([]);
  });

  it("sends a managed account's change made by someone else, long after any write of the connector's, to its handler", async () => {
    const marketing = (await stack.database.db.query(`SELECT id FROM idp_groups WHERE display_name = 'Marketing'`))[0]
      .id as string;
    const id = await idp(stack).createUser("kept@example.com");
    await idp(stack).patch(`/Groups/${marketing}`, [{ op: "add", path: "members", value: [{ value: id }] }]);
    await drain();
    clock.advance(30 * MINUTE);
    await insertEvents(stack.database.db, [
      {
        at: clock.now(),
        actor: "ops-admin@example.com",
        event: "Updated Account Permission",
        account: "Kept@Example.com",
      },
      { at: clock.now(), actor: "kept@example.com", event: "Signed In", account: "kept@example.com" },
      { at: clock.now(), actor: "ops-admin@example.com", event: "Edited Team", account: null },
      { at: clock.now(), actor: "ops-admin@example.com", event: "Created Segment", account: null },
    ]);
    const findings = await analysePending(deps);
    expect(findings).toEqual({
      ownWrites: 0,
      candidates: 0,
      outsideChanges: 1,
      removedByHand: 0,
      activity: 1,
      catalogueEdits: 1,
      ignored: 1,
    });
    expect(recorded.calls.managed.map((c) => [c.event.account, c.userId])).toEqual([
      ["kept@example.com", await idpUserId(stack.service.db, "kept@example.com")],
    ]);
    expect(await outcomesOf(stack.database.db, "kept@example.com")).toEqual(["reverted", "activity"]);
  });

  it("confirms an account made by hand by exactly one lookup, counted by the emulator and in the ledger, and alerts once", async () => {
    const made = await platformScim(stack.emulator.url).create({
      schemas: [SCIM_USER],
      userName: "contractor@example.com",
      name: { givenName: "Con", familyName: "Tractor" },
      department: "agency",
      permissions: {
        companyPermissions: ["manage_team"],
        appGroup: [{ appGroupName: "EU Production", appGroupPermissions: ["basic_access", "export_user_data"] }],
      },
    });
    expect(made.status).toBe(201);
    clock.advance(MINUTE);
    addedAt = clock.now();
    await insertEvents(stack.database.db, [
      { at: addedAt, actor: "ops-admin@example.com", event: "Added Account", account: "contractor@example.com" },
      {
        at: clock.now(),
        actor: "other-admin@example.com",
        event: "Developer Updated",
        account: "contractor@example.com",
      },
    ]);
    const lookupsBefore = await requestsTo(stack, LOOKUP);
    expect(await analysePending(deps)).toMatchObject({ candidates: 2, ownWrites: 0 });
    expect(await requestsTo(stack, LOOKUP)).toBe(lookupsBefore); // finding costs no platform call
    expect(await unmanagedRow(stack.database.db, "contractor@example.com")).toMatchObject({
      state: "candidate",
      added_by: "ops-admin@example.com",
    });

    expect(await discovery().runOnce()).toEqual({ lookups: 1, confirmed: 1, absent: 0, stopped: "none-left" });
    expect(await requestsTo(stack, LOOKUP)).toBe(lookupsBefore + 1);
    expect(await discoverDebits(stack.database.db)).toBe(1);
    expect(await unmanagedRow(stack.database.db, "contractor@example.com")).toMatchObject({
      state: "confirmed",
      platform_id: made.body.id,
      permissions: {
        companyPermissions: ["manage_team"],
        workspaces: [expect.objectContaining({ appGroupName: "EU Production" })],
      },
    });
    const alerts = await unmanagedAlerts(stack.database.db);
    expect(alerts).toHaveLength(1);
    expect(alerts[0]!.details).toMatchObject({ userName: "contractor@example.com", addedBy: "ops-admin@example.com" });

    // Analysing and looking again spends nothing, and alerts no more.
    expect(await analysePending(deps)).toMatchObject({ candidates: 0, ownWrites: 0, ignored: 0 });
    expect(await discovery().runOnce()).toMatchObject({ lookups: 0 });
    expect(await requestsTo(stack, LOOKUP)).toBe(lookupsBefore + 1);
    expect(await discoverDebits(stack.database.db)).toBe(1);
    expect(await unmanagedAlerts(stack.database.db)).toHaveLength(1);
  });

  it("importing the same events again adds nothing and spends nothing", async () => {
    const lookupsBefore = await requestsTo(stack, LOOKUP);
    const again = await insertEvents(stack.database.db, [
      { at: addedAt, actor: "ops-admin@example.com", event: "Added Account", account: "contractor@example.com" },
    ]);
    expect(again).toBe(0);
    expect(await analysePending(deps)).toMatchObject({ candidates: 0 });
    expect(await discovery().runOnce()).toMatchObject({ lookups: 0 });
    expect(await requestsTo(stack, LOOKUP)).toBe(lookupsBefore);
  });

  it("marks a removal of an unmanaged account 'removed' with no call", async () => {
    const lookupsBefore = await requestsTo(stack, LOOKUP);
    clock.advance(MINUTE);
    await insertEvents(stack.database.db, [
      { at: clock.now(), actor: "ops-admin@example.com", event: "Added Account", account: "temp@example.com" },
    ]);
    clock.advance(MINUTE);
    await insertEvents(stack.database.db, [
      { at: clock.now(), actor: "ops-admin@example.com", event: "Removed Account", account: "temp@example.com" },
    ]);
    expect(await analysePending(deps)).toMatchObject({ candidates: 1, removedByHand: 1 });
    expect(await unmanagedRow(stack.database.db, "temp@example.com")).toMatchObject({ state: "removed" });
    expect(await discovery().runOnce()).toMatchObject({ lookups: 0 });
    expect(await requestsTo(stack, LOOKUP)).toBe(lookupsBefore);
  });

  it("an account removed by hand and added again is looked up again, and alerts no second time", async () => {
    clock.advance(MINUTE);
    await insertEvents(stack.database.db, [
      { at: clock.now(), actor: "ops-admin@example.com", event: "Removed Account", account: "contractor@example.com" },
    ]);
    clock.advance(MINUTE);
    await insertEvents(stack.database.db, [
      { at: clock.now(), actor: "ops-admin@example.com", event: "Added Account", account: "contractor@example.com" },
    ]);
    expect(await analysePending(deps)).toMatchObject({ removedByHand: 1, candidates: 1 });
    expect(await unmanagedRow(stack.database.db, "contractor@example.com")).toMatchObject({ state: "candidate" });
    expect(await discovery().runOnce()).toMatchObject({ lookups: 1, confirmed: 1 });
    expect(await unmanagedAlerts(stack.database.db)).toHaveLength(1);
  });
});
