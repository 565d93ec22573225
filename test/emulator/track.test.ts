import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startClient, type Client } from "./harness.js";

type User = {
  platform_id: string;
  external_id: string | null;
  email: string | null;
  phone: string | null;
  user_aliases: object[];
  attributes: Record<string, unknown>;
  event_count: number;
  purchase_count: number;
  subscription_groups: Record<string, string>;
};

const event = (extra: object = {}) => ({ external_id: "u1", name: "played", time: "2026-01-01T10:00:00Z", ...extra });
const purchase = (extra: object = {}) => ({
  external_id: "u1",
  product_id: "sku-1",
  currency: "USD",
  price: 9.99,
  time: "2026-01-01T10:00:00Z",
  ...extra,
});

describe("POST /users/track", () => {
  let c: Client;
  beforeAll(async () => {
    c = await startClient();
  });
  afterAll(() => c.close());
  beforeEach(() => c.control("POST", "/reset"));
  const users = async (): Promise<User[]> => (await c.control("GET", "/state")).body.users;
  const track = (body: object) => c.rest("POST", "/users/track", body);

  it("success: message success and *_processed for each array sent", async () => {
    const res = await track({
      attributes: [{ external_id: "u1", plan: "pro" }],
      events: [event()],
      purchases: [purchase()],
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      message: "success",
      attributes_processed: 1,
      events_processed: 1,
      purchases_processed: 1,
    });
    const [u] = await users();
    expect(u).toMatchObject({ external_id: "u1", attributes: { plan: "pro" }, event_count: 1, purchase_count: 1 });
  });

  it("*_processed is present only for the arrays sent", async () => {
    expect((await track({ events: [event()] })).body).toEqual({ message: "success", events_processed: 1 });
  });

  it("limit: up to 75 objects per array; 76 is a fatal 400 with message and errors", async () => {
    const ok = await track({ events: Array.from({ length: 75 }, () => event()) });
    expect(ok.body.events_processed).toBe(75);
    for (const name of ["attributes", "events", "purchases"]) {
      const res = await track({ [name]: Array.from({ length: 76 }, () => ({ external_id: "u1" })) });
      expect(res.status).toBe(400);
      expect(res.body.message).toContain("75");
      expect(res.body.errors).toEqual([res.body.message]);
    }
  });

  it("fatal: a blacklisted external_id rejects the whole request", async () => {
    const res = await track({ attributes: [{ external_id: "u1" }, { external_id: "null" }] });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe("provided external_id is blacklisted and disallowed");
    expect(await users()).toEqual([]);
  });

  it("non-fatal errors: message success, errors list, unaffected data processed", async () => {
    const res = await track({ events: [event(), event({ name: "" }), event({ time: "yesterday" })] });
    expect(res.status).toBe(201);
    expect(res.body.message).toBe("success");
    expect(res.body.events_processed).toBe(1);
    expect(res.body.errors).toEqual([
      { type: "name is required", input_array: "events", index: 1 },
      { type: expect.stringContaining("time"), input_array: "events", index: 2 },
    ]);
    expect((await users())[0]!.event_count).toBe(1);
  });

  it("events are never deduplicated: identical events are separate events", async () => {
    await track({ events: [event(), event(), event()] });
    await track({ events: [event()] });
    expect((await users())[0]!.event_count).toBe(4);
  });

  it("event time: ISO 8601 or yyyy-MM-dd'T'HH:mm:ss:SSSZ", async () => {
    const res = await track({
      events: [
        event({ time: "2013-02-10T10:00:00:000Z" }),
        event({ time: "2013-02-10T10:00:00:000+0100" }),
        event({ time: "2013-02-10" }),
      ],
    });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.events_processed).toBe(3);
  });

  it.each([
    ["an empty name", { "": 1 }],
    ["a name over 255 characters", { ["n".repeat(256)]: 1 }],
    ["a name starting with $", { $price: 1 }],
    ["a string value over 255 characters", { s: "x".repeat(256) }],
    ["a datetime inside an array", { dates: ["2026-01-01T00:00:00Z"] }],
    ["arrays/objects with a payload over 50 KB", { list: Array.from({ length: 300 }, () => "y".repeat(200)) }],
    ["properties that are not an object", ["a"]],
  ])("event properties rule: %s is a non-fatal error", async (_label, properties) => {
    const res = await track({ events: [event({ properties })] });
    expect(res.body.message).toBe("success");
    expect(res.body.errors).toHaveLength(1);
    expect(res.body.events_processed).toBe(0);
  });

  it("event properties: numbers, booleans, dates, 255-char strings, arrays and objects are accepted", async () => {
    const properties = {
      n: 1.5,
      b: true,
      d: "2026-01-01T00:00:00Z",
      s: "x".repeat(255),
      ["k".repeat(255)]: 1,
      a: [1, "two"],
      o: { nested: { deep: 1 } },
    };
    const res = await track({ events: [event({ properties })], purchases: [purchase({ properties })] });
    expect(res.body.errors).toBeUndefined();
  });

  it("purchase properties follow the same rules", async () => {
    const res = await track({ purchases: [purchase({ properties: { $bad: 1 } })] });
    expect(res.body.errors).toEqual([{ type: expect.stringContaining("$"), input_array: "purchases", index: 0 }]);
  });

  it("purchases (not shown): product_id, currency, price and time are required; quantity 1..100", async () => {
    const res = await track({
      purchases: [
        purchase({ product_id: undefined }),
        purchase({ currency: "dollars" }),
        purchase({ price: "9" }),
        purchase({ time: undefined }),
        purchase({ quantity: 0 }),
        purchase({ quantity: 2 }),
      ],
    });
    expect(res.body.purchases_processed).toBe(1);
    expect(res.body.errors.map((e: { index: number }) => e.index)).toEqual([0, 1, 2, 3, 4]);
  });

  it("an object without an identifier is a non-fatal error", async () => {
    const res = await track({ attributes: [{ plan: "pro" }], events: [{ name: "x", time: "2026-01-01T00:00:00Z" }] });
    expect(res.body.errors).toHaveLength(2);
    expect(await users()).toEqual([]);
  });

  it("an unknown external_id creates a profile unless _update_existing_only is true", async () => {
    await track({
      attributes: [
        { external_id: "new1", plan: "a" },
        { external_id: "new2", plan: "b", _update_existing_only: true },
      ],
    });
    expect((await users()).map((u) => u.external_id)).toEqual(["new1"]);
    await track({ events: [event({ external_id: "new3", _update_existing_only: true })] });
    expect((await users()).map((u) => u.external_id)).toEqual(["new1"]);
  });

  it("rule 2: no profile has the email → a new email-only profile (no alias)", async () => {
    await track({ attributes: [{ email: "only@example.com", plan: "pro" }] });
    expect(await users()).toEqual([
      expect.objectContaining({
        external_id: null,
        email: "only@example.com",
        user_aliases: [],
        attributes: { plan: "pro" },
      }),
    ]);
  });

  it("rule 1: several profiles share an email → the most recently updated one with an external_id is updated", async () => {
    await track({ attributes: [{ email: "s@example.com" }] }); // email-only, no external_id
    await track({
      attributes: [
        { external_id: "a", email: "s@example.com" },
        { external_id: "b", email: "s@example.com" },
      ],
    });
    await track({ attributes: [{ external_id: "a", touched: 1 }] }); // a is now the most recent with an external_id
    await track({ attributes: [{ email: "s@example.com", hit: true }] });
    const byId = Object.fromEntries((await users()).map((u) => [u.external_id ?? "none", u.attributes]));
    expect(byId.a).toEqual({ touched: 1, hit: true });
    expect(byId.b).toEqual({});
    expect(byId.none).toEqual({});
  });

  it("rule 1: without external_ids, the most recently updated profile with the email is updated", async () => {
    await track({ attributes: [{ email: "s@example.com", n: 1 }] });
    await c.rest("POST", "/users/alias/new", { user_aliases: [{ alias_name: "x", alias_label: "crm" }] });
    await track({ attributes: [{ user_alias: { alias_name: "x", alias_label: "crm" }, email: "s@example.com" }] });
    await track({ attributes: [{ email: "s@example.com", hit: true }] });
    const aliased = (await users()).find((u) => u.user_aliases.length === 1)!;
    expect(aliased.attributes).toEqual({ hit: true });
  });

  it("rule 3: phone-based updates work only with a valid (E.164) phone number", async () => {
    const res = await track({
      attributes: [
        { phone: "555-1234", plan: "x" },
        { phone: "+15551234567", plan: "y" },
      ],
    });
    expect(res.body.errors).toEqual([{ type: expect.stringContaining("phone"), input_array: "attributes", index: 0 }]);
    expect((await users()).map((u) => u.phone)).toEqual(["+15551234567"]);
    await track({ attributes: [{ external_id: "u9", phone: "12" }] });
    expect((await users()).some((u) => u.external_id === "u9")).toBe(false);
  });

  it("user_alias: update-only is always on unless _update_existing_only is false, which creates an alias-only profile", async () => {
    const alias = { alias_name: "a1", alias_label: "crm" };
    await track({
      attributes: [{ user_alias: alias, plan: "x" }],
      events: [event({ external_id: undefined, user_alias: alias })],
    });
    await track({ attributes: [{ user_alias: alias, plan: "x", _update_existing_only: true }] });
    expect(await users()).toEqual([]);
    await track({ attributes: [{ user_alias: alias, plan: "x", _update_existing_only: false }] });
    expect(await users()).toEqual([
      expect.objectContaining({ external_id: null, user_aliases: [alias], attributes: { plan: "x" } }),
    ]);
    await track({ events: [event({ external_id: undefined, user_alias: alias })] });
    expect((await users())[0]!.event_count).toBe(1);
  });

  it("subscription state via attributes for an external_id updates every user sharing that user's email", async () => {
    await track({
      attributes: [
        { external_id: "a", email: "s@example.com" },
        { external_id: "b", email: "s@example.com" },
        { external_id: "c", email: "o@example.com" },
      ],
    });
    await track({
      attributes: [
        { external_id: "a", subscription_groups: [{ subscription_group_id: "g1", subscription_state: "subscribed" }] },
      ],
    });
    const groups = Object.fromEntries((await users()).map((u) => [u.external_id, u.subscription_groups]));
    expect(groups).toEqual({ a: { g1: "subscribed" }, b: { g1: "subscribed" }, c: {} });
  });

  it("attributes: email_subscribe and custom attributes are stored; null removes a custom attribute; objects are rejected", async () => {
    await track({
      attributes: [{ external_id: "a", email_subscribe: "subscribed", tags: ["x", "y"], n: 3, keep: "me" }],
    });
    await track({ attributes: [{ external_id: "a", n: null }] });
    const res = await track({ attributes: [{ external_id: "a", obj: { no: 1 } }] });
    expect(res.body.errors).toHaveLength(1);
    const [u] = (await c.control("GET", "/state")).body.users;
    expect(u.email_subscribe).toBe("subscribed");
    expect(u.attributes).toEqual({ tags: ["x", "y"], keep: "me" });
  });

  it("platform_id identifies an existing profile and never creates one", async () => {
    await track({ attributes: [{ external_id: "a" }] });
    const [u] = await users();
    await track({
      events: [
        { platform_id: u!.platform_id, name: "e", time: "2026-01-01T00:00:00Z" },
        { platform_id: "nope", name: "e", time: "2026-01-01T00:00:00Z" },
      ],
    });
    expect((await users()).map((x) => x.event_count)).toEqual([1]);
  });

  it("a body without attributes, events or purchases is a fatal 400", async () => {
    const res = await track({});
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([res.body.message]);
  });
});
