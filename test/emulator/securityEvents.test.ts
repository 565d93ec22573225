import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { SecurityEventLog } from "../../src/emulator/security/events.js";
import { dashboardUser, startClient, type Client } from "./harness.js";

/** The dashboard (`POST /_emulator/dashboard`) and the platform's Security Event record, over real HTTP. */

const START = new Date("2026-12-06T10:02:13.000Z");
const HEADER = "Time (UTC),Actor,Event,Account,IP Address,Details";

type Event = {
  at: string;
  actor: string;
  event: string;
  account: string | null;
  ip: string | null;
  details: string | null;
};

const PERMISSIONS = {
  companyPermissions: ["basic_access"],
  appGroup: [{ appGroupName: "Production", appGroupPermissions: ["view_campaigns"], team: [] }],
};

describe("the dashboard and its security record", () => {
  let c: Client;
  const dashboard = (body: Record<string, unknown>) => c.control("POST", "/dashboard", body);
  const events = async (): Promise<Event[]> => (await c.control("GET", "/security-events")).body.events;
  const account = async (email: string) =>
    (await c.scim("GET", `/scim/v2/Users?filter=${encodeURIComponent(`userName eq "${email}"`)}`)).body.Resources[0];

  beforeAll(async () => {
    c = await startClient({ clock: { now: () => START } });
  });
  afterAll(() => c.close());
  beforeEach(async () => {
    await c.control("POST", "/reset");
  });

  it("add-account creates the dashboard user the SCIM API would, with its permissions, and records Added Account", async () => {
    const res = await dashboard({
      action: "add-account",
      email: "contractor@example.com",
      actor: "ops-admin@example.com",
      permissions: PERMISSIONS,
      ip: "203.0.113.7",
    });
    expect(res.status).toBe(201);
    expect(res.body.userName).toBe("contractor@example.com");
    const held = await account("contractor@example.com");
    expect(held.permissions.companyPermissions).toEqual(["basic_access"]);
    expect(held.permissions.appGroup[0].appGroupPermissions).toEqual(["view_campaigns"]);
    expect(await events()).toEqual([
      {
        at: START.toISOString(),
        actor: "ops-admin@example.com",
        event: "Added Account",
        account: "contractor@example.com",
        ip: "203.0.113.7",
        details: null,
      },
    ]);
  });

  it("update-permissions replaces the grants, suspend/unsuspend flag the account, sign-in stamps it, remove-account deletes", async () => {
    const who = { email: "ada@example.com", actor: "ops-admin@example.com" };
    await dashboard({ action: "add-account", ...who, permissions: PERMISSIONS });
    const wider = { companyPermissions: ["basic_access", "manage_company_settings"], appGroup: [] };
    expect((await dashboard({ action: "update-permissions", ...who, permissions: wider })).status).toBe(204);
    expect((await account(who.email)).permissions).toEqual(wider);

    expect((await dashboard({ action: "suspend", ...who })).status).toBe(204);
    expect((await c.control("GET", "/state")).body.suspendedDashboardUsers).toEqual([who.email]);
    expect((await dashboard({ action: "unsuspend", ...who })).status).toBe(204);
    expect((await c.control("GET", "/state")).body.suspendedDashboardUsers).toEqual([]);

    await c.control("POST", "/clock", { advanceMs: 3_600_000 });
    const signedInAt = (await c.control("GET", "/clock")).body.now;
    expect((await dashboard({ action: "sign-in", ...who })).status).toBe(204);
    expect((await account(who.email)).lastSignInAt).toBe(signedInAt);
    expect((await dashboard({ action: "failed-login", ...who })).status).toBe(204);

    expect((await dashboard({ action: "remove-account", ...who })).status).toBe(204);
    expect(await account(who.email)).toBeUndefined();

    const recorded = await events();
    expect(recorded.map((e) => e.event)).toEqual([
      "Removed Account",
      "Failed Login",
      "Signed In",
      "Developer Unsuspended",
      "Developer Suspended",
      "Updated Account Permission",
      "Added Account",
    ]);
    expect(new Set(recorded.map((e) => `${e.actor} ${e.account}`))).toEqual(
      new Set(["ops-admin@example.com ada@example.com"]),
    );
    // Without "ip", the request's own address.
    expect(recorded[0]!.ip).toBe("127.0.0.1");
  });

  it("edit-role, edit-permission-set and edit-team record their event with the name as Details and no account", async () => {
    for (const action of ["edit-role", "edit-permission-set", "edit-team"])
      expect((await dashboard({ action, name: `the ${action}`, actor: "ops-admin@example.com" })).status).toBe(204);
    expect((await events()).map((e) => [e.event, e.account, e.details])).toEqual([
      ["Edited Team", null, "the edit-team"],
      ["Edited App Group Permission Set", null, "the edit-permission-set"],
      ["Updated Custom Role", null, "the edit-role"],
    ]);
  });

  it("SCIM API writes record their events with the actor SCIM API and the caller's address", async () => {
    const created = await c.scim("POST", "/scim/v2/Users", dashboardUser("api@example.com"));
    expect(created.status).toBe(201);
    expect((await c.scim("POST", "/scim/v2/Users", dashboardUser("api@example.com"))).status).toBe(409);
    const id = created.body.id as string;
    const path = `/scim/v2/Users/${id}`;
    // Same grants, another department: Developer Updated.
    expect((await c.scim("PUT", path, dashboardUser("api@example.com", { department: "sales" }))).status).toBe(200);
    const narrower = { companyPermissions: ["basic_access"], appGroup: [] };
    expect((await c.scim("PUT", path, dashboardUser("api@example.com", { permissions: narrower }))).status).toBe(200);
    expect((await c.scim("DELETE", path)).status).toBe(204);
    expect((await c.scim("DELETE", path)).status).toBe(404);

    const recorded = await events();
    expect(recorded.map((e) => e.event)).toEqual([
      "Removed Account",
      "Updated Account Permission",
      "Developer Updated",
      "Added Account",
    ]);
    for (const e of recorded)
      expect(e).toMatchObject({ actor: "SCIM API", account: "api@example.com", ip: "127.0.0.1" });
  });

  it("a PUT that only reorders the permission lists is Developer Updated, not a permission change", async () => {
    const both = { companyPermissions: ["basic_access", "manage_company_settings"], appGroup: [] };
    const created = await c.scim("POST", "/scim/v2/Users", dashboardUser("order@example.com", { permissions: both }));
    const reordered = { companyPermissions: ["manage_company_settings", "basic_access"], appGroup: [] };
    await c.scim(
      "PUT",
      `/scim/v2/Users/${created.body.id}`,
      dashboardUser("order@example.com", { permissions: reordered }),
    );
    expect((await events())[0]!.event).toBe("Developer Updated");
  });

  it("the CSV: the header, ISO UTC times with milliseconds, RFC 4180 quoting, CRLF line ends, newest first", async () => {
    // The clock's offset survives a reset; earlier tests may have moved it.
    const first = Date.parse((await c.control("GET", "/clock")).body.now);
    await dashboard({
      action: "add-account",
      email: "q@example.com",
      actor: 'Ops, "the" admin',
      permissions: PERMISSIONS,
    });
    await c.control("POST", "/clock", { advanceMs: 1_500 });
    await dashboard({ action: "edit-team", name: "Growth\r\nEU", actor: "ops@example.com", ip: "2001:db8::1" });
    const res = await c.call("GET", "/_emulator/security-events.csv");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/csv/);
    expect(new Date(first).toISOString()).toMatch(/^2026-12-06T\d\d:02:13\.000Z$/);
    expect(res.text).toBe(
      [
        HEADER,
        `${new Date(first + 1_500).toISOString()},ops@example.com,Edited Team,,2001:db8::1,"Growth\r\nEU"`,
        `${new Date(first).toISOString()},"Ops, ""the"" admin",Added Account,q@example.com,127.0.0.1,`,
        "",
      ].join("\r\n"),
    );
  });

  it("the CSV holds the most recent 10,000 events", async () => {
    for (let i = 0; i < 10_005; i++)
      c.emulator.state.securityEvents.record({
        at: START.getTime() + i,
        actor: "ops@example.com",
        event: "Signed In",
        account: `u${i}@example.com`,
        ip: null,
        details: null,
      });
    const lines = (await c.call("GET", "/_emulator/security-events.csv")).text.split("\r\n");
    expect(lines).toHaveLength(1 + 10_000 + 1); // header, rows, and the empty string after the last CRLF
    expect(lines[1]).toContain("u10004@example.com");
    expect(lines[10_000]).toContain(",u5@example.com,");
  });

  it("the 400 answers name what is wrong", async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ action: "promote", email: "a@example.com", actor: "x" }, /action must be one of add-account, .*edit-team/],
      [{ action: "suspend", actor: "x" }, /email is required/],
      [{ action: "suspend", email: "not-an-email", actor: "x" }, /email must be an email address/],
      [{ action: "suspend", email: "a@example.com" }, /actor is required/],
      [{ action: "edit-role", actor: "x" }, /name is required/],
      [{ action: "sign-in", email: "a@example.com", actor: "x", ip: "here" }, /ip must be an IPv4 or IPv6 address/],
      [
        { action: "add-account", email: "a@example.com", actor: "x", permissions: { appGroup: {} } },
        /permissions.appGroup must be an array/,
      ],
      [
        { action: "add-account", email: "a@example.com", actor: "x", permissions: { companyPermissions: "all" } },
        /permissions.companyPermissions must be an array of strings/,
      ],
    ];
    for (const [body, message] of cases) {
      const res = await dashboard(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.message).toMatch(message);
    }
    await dashboard({ action: "add-account", email: "a@example.com", actor: "x" });
    const res = await dashboard({ action: "update-permissions", email: "a@example.com", actor: "x" });
    expect([res.status, res.body.message]).toEqual([400, "permissions is required for update-permissions"]);
    // Nothing refused was recorded.
    expect((await events()).map((e) => e.event)).toEqual(["Added Account"]);
  });

  it("404 for an account the platform does not hold, 409 for adding one it does", async () => {
    for (const action of ["update-permissions", "remove-account", "suspend", "unsuspend", "sign-in", "failed-login"]) {
      const res = await dashboard({ action, email: "nobody@example.com", actor: "x", permissions: PERMISSIONS });
      expect([action, res.status, res.body.message]).toEqual([action, 404, 'No dashboard user "nobody@example.com"']);
    }
    await dashboard({ action: "add-account", email: "twice@example.com", actor: "x" });
    const again = await dashboard({ action: "add-account", email: "TWICE@example.com", actor: "x" });
    expect(again.status).toBe(409);
    expect(await events()).toHaveLength(1);
  });
});

describe("the dashboard in a granular company", () => {
  let c: Client;
  beforeAll(async () => {
    c = await startClient({ permissions: "granular-strict" });
  });
  afterAll(() => c.close());

  it("permissions are checked as the SCIM API checks them: an unknown role, a refused legacy string", async () => {
    const base = { action: "add-account", email: "g@example.com", actor: "x" };
    const role = await c.control("POST", "/dashboard", { ...base, permissions: { roles: [{ roleName: "Nobody" }] } });
    expect([role.status, role.body.message]).toEqual([400, 'permissions.roles[0]: no role with roleName "Nobody"']);
    const legacy = await c.control("POST", "/dashboard", {
      ...base,
      permissions: { appGroup: [{ appGroupName: "W", appGroupPermissions: ["send_campaigns_canvases"] }] },
    });
    expect(legacy.status).toBe(400);
    expect(legacy.body.message).toContain("send_campaigns_canvases");
    expect((await c.control("POST", "/dashboard", { ...base, permissions: { companyPermissions: [] } })).status).toBe(
      201,
    );
  });
});

describe("the record stays bounded in memory", () => {
  it("beyond its capacity the oldest events are forgotten, the most recent kept", () => {
    const log = new SecurityEventLog(100);
    for (let i = 0; i < 1_000; i++)
      log.record({ at: i, actor: "a", event: "Signed In", account: `${i}`, ip: null, details: null });
    expect(log.size).toBeLessThanOrEqual(100);
    expect(log.size).toBeGreaterThanOrEqual(90);
    expect(log.recent(3).map((e) => e.account)).toEqual(["999", "998", "997"]);
  });
});

describe("the record's UTC days (what the daily export writes)", () => {
  it("each event belongs to the UTC day of its time, midnight to the day that starts", () => {
    const log = new SecurityEventLog();
    const at = (iso: string) =>
      log.record({ at: Date.parse(iso), actor: "a", event: iso, account: null, ip: null, details: null });
    [
      "2026-12-05T23:59:59.999Z",
      "2026-12-06T00:00:00.000Z",
      "2026-12-06T23:00:00.000Z",
      "2026-12-08T00:00:00.000Z",
    ].forEach(at);
    expect(log.days()).toEqual(["2026-12-05", "2026-12-06", "2026-12-08"]);
    expect(log.ofDay("2026-12-06").map((e) => e.event)).toEqual([
      "2026-12-06T23:00:00.000Z",
      "2026-12-06T00:00:00.000Z",
    ]);
    expect(log.ofDay("2026-12-07")).toEqual([]);
  });
});
