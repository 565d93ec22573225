import request from "supertest";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { dashboardUser, startClient, type Client } from "./harness.js";

describe("control plane /_emulator", () => {
  let c: Client;
  beforeAll(async () => {
    c = await startClient();
  });
  afterAll(() => c.close());
  beforeEach(() => c.control("POST", "/reset"));

  it("GET /_emulator/stats counts requests by METHOD and path template, and reports scimDaily", async () => {
    const created = await c.scim("POST", "/scim/v2/Users", dashboardUser("a@example.com"));
    await c.scim("GET", `/scim/v2/Users/${created.body.id}`);
    await c.scim("GET", "/scim/v2/Users/other");
    await c.rest("POST", "/email/status", { email: "a@example.com", subscription_state: "subscribed" });
    await c.rest("PUT", "/preference_center/v1/x", {});
    await c.call("POST", "/email/status", { body: {} }); // 401 still counts as a request
    const stats = (await c.control("GET", "/stats")).body;
    expect(stats).toEqual({
      requests: {
        "POST /scim/v2/Users": 1,
        "GET /scim/v2/Users/{id}": 2,
        "POST /email/status": 2,
        "PUT /preference_center/v1/{preferenceCenterExternalID}": 1,
      },
      scimDaily: { used: 3, limit: 5000 },
    });
  });

  it("POST /_emulator/reset clears state, fixtures, faults and counters", async () => {
    await c.scim("POST", "/scim/v2/Users", dashboardUser("a@example.com"));
    await c.rest("POST", "/users/track", { attributes: [{ external_id: "u1" }] });
    await c.control("POST", "/fixtures", {
      integrations: [{ integration_id: "i1" }],
      invalidPhones: [{ phone: "+15550000001", invalid_detected_at: "2026-01-01T00:00:00Z", reason: "deactivated" }],
    });
    await c.control("POST", "/faults", { path: "/email", status: 500 });
    expect((await c.control("POST", "/reset")).status).toBe(200);
    const state = (await c.control("GET", "/state")).body;
    expect(state.users).toEqual([]);
    expect(state.dashboardUsers).toEqual([]);
    expect(state.integrations).toEqual([]);
    expect(state.deliverability.invalidPhones).toEqual([]);
    expect(state.faults).toEqual([]);
    expect((await c.control("GET", "/stats")).body).toEqual({ requests: {}, scimDaily: { used: 0, limit: 5000 } });
  });

  it("POST /_emulator/clock {advanceMs} moves the emulator clock forward (and rejects negative moves)", async () => {
    const before = Date.parse((await c.control("GET", "/clock")).body.now);
    const after = await c.control("POST", "/clock", { advanceMs: 3_600_000 });
    expect(Date.parse(after.body.now) - before).toBeGreaterThanOrEqual(3_600_000);
    expect((await c.control("POST", "/clock", { advanceMs: -1 })).status).toBe(400);
  });

  it("GET /_emulator/state dumps users, email states, deliverability lists, dashboard users and preference centers", async () => {
    await c.rest("POST", "/users/track", {
      attributes: [{ external_id: "u1", email: "a@example.com" }],
      events: [{ external_id: "u1", name: "e", time: "2026-01-01T00:00:00Z" }],
    });
    await c.rest("POST", "/email/status", { email: "b@example.com", subscription_state: "unsubscribed" });
    await c.rest("POST", "/email/blocklist", { email: "c@example.com" });
    await c.scim("POST", "/scim/v2/Users", dashboardUser("d@example.com"));
    await c.rest("PUT", "/preference_center/v1/p", {
      preference_center_page_html: "<p/>",
      confirmation_page_html: "<p/>",
    });
    const s = (await c.control("GET", "/state")).body;
    expect(s.users[0]).toMatchObject({
      external_id: "u1",
      email: "a@example.com",
      event_count: 1,
      purchase_count: 0,
      user_aliases: [],
    });
    expect(s.emailStates).toEqual({ "b@example.com": "unsubscribed" });
    expect(s.deliverability.hardBounces).toEqual(["c@example.com"]);
    expect(s.dashboardUsers[0].userName).toBe("d@example.com");
    expect(s.preferenceCenters[0].preference_center_api_id).toBe("p");
  });

  it("fixtures are validated in the document's record shapes", async () => {
    expect(
      (
        await c.control("POST", "/fixtures", {
          invalidPhones: [{ phone: "555", invalid_detected_at: "2026-01-01T00:00:00Z", reason: "deactivated" }],
        })
      ).status,
    ).toBe(400);
    expect((await c.control("POST", "/fixtures", { syncJobs: { i1: [{ job_status: "done" }] } })).status).toBe(400);
    expect((await c.control("POST", "/fixtures", { integrations: [{ name: "no id" }] })).status).toBe(400);
  });

  describe("faults", () => {
    it("status with count: the next n matching requests (method + path prefix) get the status, then it is gone", async () => {
      await c.control("POST", "/faults", { method: "PUT", path: "/scim/v2/Users", status: 503, count: 2 });
      const created = await c.scim("POST", "/scim/v2/Users", dashboardUser("a@example.com"));
      expect(created.status).toBe(201); // POST does not match the PUT fault
      const put = () => c.scim("PUT", `/scim/v2/Users/${created.body.id}`, dashboardUser("a@example.com"));
      expect((await put()).status).toBe(503);
      expect((await put()).status).toBe(503);
      expect((await put()).status).toBe(200);
    });

    it("probability 1 always fires, probability 0 never; DELETE /_emulator/faults clears them", async () => {
      await c.control("POST", "/faults", { path: "/email/status", status: 500, probability: 0 });
      const body = { email: "a@example.com", subscription_state: "subscribed" };
      expect((await c.rest("POST", "/email/status", body)).status).toBe(200);
      await c.control("POST", "/faults", { path: "/email", status: 502, probability: 1 });
      expect((await c.rest("POST", "/email/status", body)).status).toBe(502);
      expect((await c.control("DELETE", "/faults")).status).toBe(200);
      expect((await c.rest("POST", "/email/status", body)).status).toBe(200);
    });

    it("delayMs slows matching requests without changing the answer", async () => {
      await c.control("POST", "/faults", { path: "/scim", status: null, delayMs: 150, count: 1 });
      const started = Date.now();
      const res = await c.scim("GET", "/scim/v2/Users/x");
      expect(Date.now() - started).toBeGreaterThanOrEqual(140);
      expect(res.status).toBe(404);
    });

    it("dropConnection closes the socket without an answer", async () => {
      await c.control("POST", "/faults", { path: "/scim/v2/Users", dropConnection: true, count: 1 });
      await expect(c.scim("GET", "/scim/v2/Users/x")).rejects.toThrow();
      expect((await c.scim("GET", "/scim/v2/Users/x")).status).toBe(404);
    });

    it("an invalid fault spec is a 400", async () => {
      expect((await c.control("POST", "/faults", { path: "scim", status: 500 })).status).toBe(400);
      expect(
        (await c.control("POST", "/faults", { path: "/scim", status: 500, count: 1, probability: 0.5 })).status,
      ).toBe(400);
      expect((await c.control("POST", "/faults", { path: "/scim" })).status).toBe(400);
    });
  });
});

describe("control plane is loopback only", () => {
  it("a non-loopback caller gets 403 (checked against the emulator bound on a non-loopback address when one exists)", async () => {
    const { networkInterfaces } = await import("node:os");
    const external = Object.values(networkInterfaces())
      .flat()
      .find((i) => i && i.family === "IPv4" && !i.internal);
    if (!external) return; // no non-loopback address on this machine: covered by the isLoopback unit test
    const c = await startClient({ host: external.address });
    try {
      expect((await c.control("GET", "/stats")).status).toBe(403);
      expect((await c.scim("GET", "/scim/v2/Users/x")).status).toBe(404); // the platform API still answers
    } finally {
      await c.close();
    }
  });

  it.each([
    ["127.0.0.1", true],
    ["127.1.2.3", true],
    ["::1", true],
    ["::ffff:127.0.0.1", true],
    ["10.0.0.5", false],
    ["::ffff:192.168.1.1", false],
    [undefined, false],
  ])("isLoopback(%s) = %s", async (address, expected) => {
    const { isLoopback } = await import("../../src/emulator/control.js");
    expect(isLoopback(address)).toBe(expected);
  });
});

describe("control plane refuses cross-site requests", () => {
  let c: Client;
  beforeAll(async () => {
    c = await startClient();
  });
  afterAll(() => c.close());
  const port = () => new URL(c.emulator.url).port;
  const fault = { path: "/scim", status: 500 };
  const faultCount = async () => ((await c.control("GET", "/faults")).body.faults as unknown[]).length;

  it("a text/plain or form body (what a cross-site page can post without a preflight) is refused with 415 and changes nothing", async () => {
    const before = await faultCount();
    const plain = await request(c.emulator.url)
      .post("/_emulator/faults")
      .set("Content-Type", "text/plain")
      .send(JSON.stringify(fault));
    expect([plain.status, plain.body.message]).toEqual([415, expect.stringContaining("JSON")]);
    const form = await request(c.emulator.url).post("/_emulator/faults").type("form").send(fault);
    expect(form.status).toBe(415);
    expect(
      (await request(c.emulator.url).post("/_emulator/reset").set("Content-Type", "text/plain").send("x")).status,
    ).toBe(415);
    expect(await faultCount()).toBe(before);
    // JSON, and body-less calls (reset, clearing faults), still work.
    expect((await request(c.emulator.url).post("/_emulator/faults").send(fault)).status).toBe(201);
    expect((await request(c.emulator.url).delete("/_emulator/faults")).status).toBe(200);
    expect((await request(c.emulator.url).post("/_emulator/reset")).status).toBe(200);
  });

  it("a foreign Origin is refused, a loopback one accepted", async () => {
    for (const origin of ["https://evil.example", "null", "http://127.0.0.1.evil.example", "file://"]) {
      const res = await request(c.emulator.url).post("/_emulator/reset").set("Origin", origin);
      expect([origin, res.status]).toEqual([origin, 403]);
    }
    expect((await request(c.emulator.url).get("/_emulator/state").set("Origin", "https://evil.example")).status).toBe(
      403,
    );
    expect(
      (await request(c.emulator.url).post("/_emulator/reset").set("Origin", `http://localhost:${port()}`)).status,
    ).toBe(200);
  });

  it("a Host that does not name this machine (DNS rebinding) is refused", async () => {
    for (const host of [`evil.example:${port()}`, "evil.example", `127.0.0.1.nip.example:${port()}`]) {
      const res = await request(c.emulator.url).get("/_emulator/stats").set("Host", host);
      expect([host, res.status]).toEqual([host, 403]);
    }
    for (const host of [`localhost:${port()}`, `127.0.0.1:${port()}`, `[::1]:${port()}`]) {
      expect((await request(c.emulator.url).get("/_emulator/stats").set("Host", host)).status).toBe(200);
    }
    // The platform API itself does not care about Host (a real platform sits behind DNS).
    expect((await c.scim("GET", "/scim/v2/Users/x")).status).toBe(404);
  });
});

describe("closing the emulator", () => {
  it("close() does not wait for an injected delay in progress", async () => {
    const c = await startClient();
    await c.control("POST", "/faults", { path: "/scim", status: null, delayMs: 60_000 });
    const pending = c.scim("GET", "/scim/v2/Users/x").catch(() => "dropped");
    // The request has arrived and is held by the delay.
    await vi.waitFor(() => expect(c.emulator.state.requestCounts.get("GET /scim/v2/Users/{id}")).toBe(1), {
      interval: 10,
    });
    const started = Date.now();
    await c.close();
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await pending).toBe("dropped");
  });
});
