import { describe, expect, it } from "vitest";
import { eventKind } from "../../src/platformRecord/events.js";
import { loadEnv } from "../../src/config/env.js";
import {
  analysisPolicyFromEnv,
  decideEvent,
  ownWriteActions,
  pickOwnDebit,
  type StoredPlatformEvent,
} from "../../src/platformRecord/findings.js";

const event = (name: string, actor = "ops-admin@example.com", account: string | null = "a@example.com") =>
  ({
    id: "1",
    at: new Date(0),
    actor,
    event: name,
    kind: eventKind(name),
    account,
    ip: null,
    details: null,
  }) as StoredPlatformEvent;

const none = { idpUserId: null, accountUserId: null, ownDebit: false };
const policy = { ownWriteWindowMinutes: 10 };

describe("decideEvent", () => {
  it.each([
    ["Added Account", none, { route: "unmanaged", removed: false }],
    ["Removed Account", none, { route: "unmanaged", removed: true }],
    ["Added Account", { ...none, ownDebit: true }, { route: "own-write" }],
    ["Updated Account Permission", { ...none, idpUserId: "u1" }, { route: "managed", userId: "u1", removed: false }],
    ["Removed Developer", { ...none, accountUserId: "u2" }, { route: "managed", userId: "u2", removed: true }],
    ["Developer Updated", { ...none, idpUserId: "u1", ownDebit: true }, { route: "own-write" }],
    ["Signed In", { ...none, ownDebit: true }, { route: "activity" }],
    ["Developer Suspended", none, { route: "activity" }],
    ["Edited Team", none, { route: "catalogue" }],
    ["Updated Custom Role", none, { route: "catalogue" }],
    ["Created Segment", none, { route: "ignored" }],
  ] as const)("%s with %o → %o", (name, facts, decision) => {
    expect(decideEvent(event(name), facts, policy)).toEqual(decision);
  });

  it("an account event naming no account is ignored", () => {
    expect(decideEvent(event("Added Account", "x", null), none, policy)).toEqual({ route: "ignored" });
  });

  it("SECURITY_EVENTS_CONNECTOR_ACTOR, when set, also marks own writes (exact text)", () => {
    const withActor = { ...policy, connectorActor: "Braze SCIM" };
    expect(decideEvent(event("Added Account", "Braze SCIM"), none, withActor)).toEqual({ route: "own-write" });
    expect(decideEvent(event("Added Account", "braze scim"), none, withActor)).toEqual({
      route: "unmanaged",
      removed: false,
    });
  });

  it("own writes are matched by the ledger's actions", () => {
    expect(ownWriteActions("account-added")).toEqual(["create"]);
    expect(ownWriteActions("permissions-changed")).toEqual(["update", "strip", "create"]);
    expect(ownWriteActions("account-removed")).toEqual(["deprovision"]);
    expect(ownWriteActions("signed-in")).toEqual([]);
  });

  it("reads its policy from the environment", () => {
    expect(analysisPolicyFromEnv(loadEnv({}))).toEqual({ ownWriteWindowMinutes: 10, connectorActor: undefined });
    expect(
      analysisPolicyFromEnv(
        loadEnv({ SECURITY_EVENTS_OWN_WRITE_WINDOW_MINUTES: "3", SECURITY_EVENTS_CONNECTOR_ACTOR: " Braze SCIM " }),
      ),
    ).toEqual({ ownWriteWindowMinutes: 3, connectorActor: "Braze SCIM" });
    expect(loadEnv({}).UNMANAGED_LOOKUPS_PER_DAY).toBe(200);
    expect(() => loadEnv({ UNMANAGED_LOOKUPS_PER_DAY: "-1" })).toThrow(/UNMANAGED_LOOKUPS_PER_DAY/);
  });
});

describe("one write of the connector's explains one event", () => {
  const create = { id: "d1", action: "create", explains: [] };
  const added = { kind: "account-added", actor: "API" };
  it.each([
    ["a debit nothing explained yet", event("Added Account", "API"), [create], new Map(), "d1"],
    [
      "a create whose Added Account it explained, for a permission event by the same actor",
      event("Updated Account Permission", "API"),
      [{ ...create, explains: [added] }],
      new Map(),
      "d1",
    ],
    [
      "a create, for a permission event by another actor: a change made in the dashboard just after",
      event("Updated Account Permission", "ops-admin@example.com"),
      [{ ...create, explains: [added] }],
      new Map(),
      undefined,
    ],
    [
      "a create that explained no Added Account, for a permission event: its Added Account is not in the record",
      event("Updated Account Permission", "ops-admin@example.com"),
      [create],
      new Map(),
      undefined,
    ],
    [
      "an update already explained by an event of this call",
      event("Developer Updated", "API"),
      [{ id: "d2", action: "update", explains: [] }],
      new Map([["d2", [{ kind: "account-updated", actor: "API" }]]]),
      undefined,
    ],
    [
      "the next candidate when the nearest is taken",
      event("Developer Updated", "API"),
      [
        { id: "d2", action: "update", explains: [{ kind: "account-updated", actor: "API" }] },
        { id: "d3", action: "update", explains: [] },
      ],
      new Map(),
      "d3",
    ],
  ])("%s", (_, e, candidates, explainedNow, expected) => {
    expect(pickOwnDebit(e, candidates, explainedNow)).toBe(expected);
  });
});
