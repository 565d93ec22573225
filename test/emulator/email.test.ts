import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startClient, type Client } from "./harness.js";

const fifty = (n: number) => Array.from({ length: n }, (_, i) => `user${i}@example.com`);

describe("email endpoints", () => {
  let c: Client;
  beforeAll(async () => {
    c = await startClient();
  });
  afterAll(() => c.close());
  beforeEach(() => c.control("POST", "/reset"));
  const state = async () => (await c.control("GET", "/state")).body;

  it("POST /email/status sets the state of an existing user's address (subscribed, unsubscribed, opted_in)", async () => {
    await c.rest("POST", "/users/track", { attributes: [{ external_id: "u1", email: "ada@example.com" }] });
    for (const value of ["opted_in", "unsubscribed", "subscribed"]) {
      const res = await c.rest("POST", "/email/status", { email: "ada@example.com", subscription_state: value });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ message: "success" });
      expect((await state()).users[0].email_subscribe).toBe(value);
    }
  });

  it("POST /email/status: an address not yet tied to a user is remembered and applied when a user with that address appears", async () => {
    await c.rest("POST", "/email/status", { email: ["later@example.com"], subscription_state: "opted_in" });
    expect((await state()).emailStates).toEqual({ "later@example.com": "opted_in" });
    await c.rest("POST", "/users/track", {
      attributes: [{ external_id: "u2", email: "Later@Example.com", plan: "pro" }],
    });
    const user = (await state()).users.find((u: { external_id: string }) => u.external_id === "u2");
    expect(user.email_subscribe).toBe("opted_in");
  });

  it("POST /email/status applies to every profile sharing the address", async () => {
    await c.rest("POST", "/users/track", {
      attributes: [
        { external_id: "a", email: "s@example.com" },
        { external_id: "b", email: "s@example.com" },
      ],
    });
    await c.rest("POST", "/email/status", { email: "s@example.com", subscription_state: "unsubscribed" });
    expect((await state()).users.map((u: { email_subscribe: string }) => u.email_subscribe)).toEqual([
      "unsubscribed",
      "unsubscribed",
    ]);
  });

  it("POST /email/status: email is required, up to 50, and subscription_state must be one of the three", async () => {
    expect((await c.rest("POST", "/email/status", { subscription_state: "subscribed" })).status).toBe(400);
    expect((await c.rest("POST", "/email/status", { email: fifty(50), subscription_state: "subscribed" })).status).toBe(
      200,
    );
    const tooMany = await c.rest("POST", "/email/status", { email: fifty(51), subscription_state: "subscribed" });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.message).toContain("at most 50");
    expect((await c.rest("POST", "/email/status", { email: "a@b.co", subscription_state: "maybe" })).status).toBe(400);
    expect(
      (await c.rest("POST", "/email/status", { email: "not-an-email", subscription_state: "subscribed" })).status,
    ).toBe(400);
  });

  it("POST /email/blacklist marks addresses as hard bounces; /email/blocklist does the same", async () => {
    expect((await c.rest("POST", "/email/blacklist", { email: "a@example.com" })).status).toBe(200);
    expect((await c.rest("POST", "/email/blocklist", { email: ["b@example.com", "C@example.com"] })).status).toBe(200);
    expect((await state()).deliverability.hardBounces).toEqual(["a@example.com", "b@example.com", "c@example.com"]);
  });

  it("POST /email/blacklist and /email/blocklist accept at most 50 addresses", async () => {
    expect((await c.rest("POST", "/email/blacklist", { email: fifty(51) })).status).toBe(400);
    expect((await c.rest("POST", "/email/blocklist", { email: fifty(51) })).status).toBe(400);
  });

  it("POST /email/bounce/remove removes addresses from the bounce list", async () => {
    await c.rest("POST", "/email/blacklist", { email: ["a@example.com", "b@example.com"] });
    expect((await c.rest("POST", "/email/bounce/remove", { email: "a@example.com" })).status).toBe(200);
    expect((await state()).deliverability.hardBounces).toEqual(["b@example.com"]);
    expect((await c.rest("POST", "/email/bounce/remove", { email: fifty(51) })).status).toBe(400);
  });

  it("POST /email/spam/remove removes addresses from the spam list", async () => {
    await c.control("POST", "/fixtures", { spam: ["s1@example.com", "s2@example.com"] });
    expect((await c.rest("POST", "/email/spam/remove", { email: ["s1@example.com"] })).status).toBe(200);
    expect((await state()).deliverability.spam).toEqual(["s2@example.com"]);
    expect((await c.rest("POST", "/email/spam/remove", { email: fifty(51) })).status).toBe(400);
    expect((await c.rest("POST", "/email/spam/remove", {})).status).toBe(400);
  });
});

describe("SMS invalid phone numbers", () => {
  let c: Client;
  beforeAll(async () => {
    c = await startClient();
  });
  afterAll(() => c.close());
  beforeEach(async () => {
    await c.control("POST", "/reset");
    await c.control("POST", "/fixtures", {
      invalidPhones: [
        { phone: "+15550000001", invalid_detected_at: "2026-01-01T10:00:00Z", reason: "provider_error" },
        { phone: "+15550000002", invalid_detected_at: "2026-01-02T00:00:00Z", reason: "deactivated" },
        { phone: "+15550000003", invalid_detected_at: "2026-01-03T23:59:59Z", reason: "provider_error" },
        { phone: "+15550000004", invalid_detected_at: "2026-01-05T08:00:00Z", reason: "deactivated" },
      ],
    });
  });
  const phones = (res: { body: { sms: Array<{ phone: string }> } }) => res.body.sms.map((r) => r.phone);

  it("GET /sms/invalid_phone_numbers returns records newest invalid_detected_at first, with message success", async () => {
    const res = await c.rest("GET", "/sms/invalid_phone_numbers");
    expect(res.status).toBe(200);
    expect(res.body.message).toBe("success");
    expect(phones(res)).toEqual(["+15550000004", "+15550000003", "+15550000002", "+15550000001"]);
    expect(res.body.sms[0]).toEqual({
      phone: "+15550000004",
      invalid_detected_at: "2026-01-05T08:00:00Z",
      reason: "deactivated",
    });
  });

  it("start_date and end_date are UTC midnight: start inclusive, end exclusive", async () => {
    const res = await c.rest("GET", "/sms/invalid_phone_numbers?start_date=2026-01-02&end_date=2026-01-05");
    expect(phones(res)).toEqual(["+15550000003", "+15550000002"]);
  });

  it("start_date must be before end_date, and dates must be YYYY-MM-DD", async () => {
    expect((await c.rest("GET", "/sms/invalid_phone_numbers?start_date=2026-01-05&end_date=2026-01-02")).status).toBe(
      400,
    );
    expect((await c.rest("GET", "/sms/invalid_phone_numbers?start_date=2026-01-05&end_date=2026-01-05")).status).toBe(
      400,
    );
    expect((await c.rest("GET", "/sms/invalid_phone_numbers?start_date=01/02/2026")).status).toBe(400);
    expect((await c.rest("GET", "/sms/invalid_phone_numbers?start_date=2026-02-30")).status).toBe(400);
  });

  it("limit defaults to 100, maximum 500; offset pages until fewer than limit return", async () => {
    expect((await c.rest("GET", "/sms/invalid_phone_numbers?limit=500")).status).toBe(200);
    const over = await c.rest("GET", "/sms/invalid_phone_numbers?limit=501");
    expect(over.status).toBe(400);
    expect(over.body.message).toContain("limit");
    expect(phones(await c.rest("GET", "/sms/invalid_phone_numbers?limit=3"))).toHaveLength(3);
    expect(phones(await c.rest("GET", "/sms/invalid_phone_numbers?limit=3&offset=3"))).toEqual(["+15550000001"]);
    expect(phones(await c.rest("GET", "/sms/invalid_phone_numbers?offset=10"))).toEqual([]);
  });

  it("limit default is 100", async () => {
    const many = Array.from({ length: 120 }, (_, i) => ({
      phone: `+1666${String(i).padStart(7, "0")}`,
      invalid_detected_at: "2026-02-01T00:00:00Z",
      reason: "deactivated",
    }));
    await c.control("POST", "/fixtures", { invalidPhones: many });
    expect(phones(await c.rest("GET", "/sms/invalid_phone_numbers"))).toHaveLength(100);
  });

  it("phone_numbers returns those numbers if found invalid; reason filters", async () => {
    const res = await c.rest(
      "GET",
      "/sms/invalid_phone_numbers?phone_numbers[]=%2B15550000002&phone_numbers[]=%2B15559999999",
    );
    expect(phones(res)).toEqual(["+15550000002"]);
    expect(phones(await c.rest("GET", "/sms/invalid_phone_numbers?reason=provider_error"))).toEqual([
      "+15550000003",
      "+15550000001",
    ]);
    expect((await c.rest("GET", "/sms/invalid_phone_numbers?reason=other")).status).toBe(400);
    expect((await c.rest("GET", "/sms/invalid_phone_numbers?phone_numbers=5550000002")).status).toBe(400);
  });

  it("POST /sms/invalid_phone_numbers/remove removes numbers given as phone_numbers", async () => {
    const res = await c.rest("POST", "/sms/invalid_phone_numbers/remove", {
      phone_numbers: ["+15550000001", "+15550000002"],
    });
    expect(res.status).toBe(200);
    expect(phones(await c.rest("GET", "/sms/invalid_phone_numbers"))).toEqual(["+15550000004", "+15550000003"]);
  });

  it("POST /sms/invalid_phone_numbers/remove also accepts phone_number, as the parameter table names it", async () => {
    await c.rest("POST", "/sms/invalid_phone_numbers/remove", { phone_number: ["+15550000004"] });
    expect(phones(await c.rest("GET", "/sms/invalid_phone_numbers"))).not.toContain("+15550000004");
  });

  it("POST /sms/invalid_phone_numbers/remove: required, up to 50, E.164 only", async () => {
    expect((await c.rest("POST", "/sms/invalid_phone_numbers/remove", {})).status).toBe(400);
    const many = Array.from({ length: 51 }, (_, i) => `+1555${String(i).padStart(7, "0")}`);
    expect((await c.rest("POST", "/sms/invalid_phone_numbers/remove", { phone_numbers: many })).status).toBe(400);
    expect((await c.rest("POST", "/sms/invalid_phone_numbers/remove", { phone_numbers: ["555-1234"] })).status).toBe(
      400,
    );
  });
});
