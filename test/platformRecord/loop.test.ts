import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { systemClock } from "../../src/clock.js";
import { analysePending } from "../../src/platformRecord/findings.js";
import { startStack, type Stack } from "../support/stack.js";
import { platformScim, requestsTo, SCIM_USER } from "../reconcile/helpers.js";
import { discoverDebits, insertEvents, recordingHandlers, unmanagedAlerts, unmanagedRow } from "./helpers.js";

/**
 * The discovery lane as the service runs it: a LoopWorker on the background loop of the worker
 * role, woken when the analysis records a candidate; the candidate is confirmed by one lookup.
 */
describe("the discovery lane in the running service", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { UNMANAGED_LOOKUP_POLL_MS: "600000" } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it("confirms a candidate the analysis wakes it for, with one lookup", async () => {
    const made = await platformScim(stack.emulator.url).create({
      schemas: [SCIM_USER],
      userName: "woken@example.com",
      name: { givenName: "Wo", familyName: "Ken" },
      department: "agency",
      permissions: { companyPermissions: [], appGroup: [] },
    });
    expect(made.status).toBe(201);
    const before = await requestsTo(stack, "GET /scim/v2/Users");
    await insertEvents(stack.database.db, [
      { at: new Date(), actor: "ops-admin@example.com", event: "Added Account", account: "woken@example.com" },
    ]);
    await analysePending({
      db: stack.service.db,
      clock: systemClock,
      handlers: recordingHandlers().handlers,
      policy: { ownWriteWindowMinutes: 10 },
      onCandidate: () => stack.service.discovery?.notify(),
    });
    // The poll is 10 minutes: only the wake can have run the pass this soon.
    await vi.waitFor(
      async () =>
        expect(await unmanagedRow(stack.database.db, "woken@example.com")).toMatchObject({ state: "confirmed" }),
      {
        timeout: 10_000,
        interval: 50,
      },
    );
    expect(await requestsTo(stack, "GET /scim/v2/Users")).toBe(before + 1);
    expect(await discoverDebits(stack.database.db)).toBe(1);
    expect(await unmanagedAlerts(stack.database.db)).toHaveLength(1);
  });
});
