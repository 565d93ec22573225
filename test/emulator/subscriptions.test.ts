import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startClient, type Client } from "./harness.js";

const ids = (n: number, prefix = "u") => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe("subscription groups", () => {
  let c: Client;
  beforeAll(async () => {
    c = await startClient();
  });
  afterAll(() => c.close());
  beforeEach(async () => {
    await c.control("POST", "/reset");
    await c.rest("POST", "/users/track", {
      attributes: [
        { external_id: "u1", email: "shared@example.com", phone: "+15551110001" },
        { external_id: "u2", email: "shared@example.com" },
        { external_id: "u3", email: "solo@example.com", phone: "+15551110003" },
      ],
    });
  });
  const status = async (query: string) =>
    (await c.rest("GET", `/subscription/status/get?subscription_group_id=g1&${query}`)).body;

  it("POST /subscription/status/set answers 201 success and sets the state for external_id", async () => {
    const res = await c.rest("POST", "/subscription/status/set", {
      subscription_group_id: "g1",
      subscription_state: "subscribed",
      external_id: "u3",
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ message: "success" });
    expect((await status("external_id=u3")).status).toEqual({ u3: "Subscribed" });
  });

  it("POST /subscription/status/set: an email linked to several profiles updates all of them", async () => {
    await c.rest("POST", "/subscription/status/set", {
      subscription_group_id: "g1",
      subscription_state: "unsubscribed",
      email: "shared@example.com",
    });
    expect((await status("external_id[]=u1&external_id[]=u2&external_id[]=u3")).status).toEqual({
      u1: "Unsubscribed",
      u2: "Unsubscribed",
      u3: "Unknown",
    });
  });

  it("POST /subscription/status/set with both email and phone is 400 with the exact message", async () => {
    const res = await c.rest("POST", "/subscription/status/set", {
      subscription_group_id: "g1",
      subscription_state: "subscribed",
      email: "solo@example.com",
      phone: ["+15551110003"],
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe("Either an email address or a phone number should be provided, but not both.");
  });

  it("POST /subscription/status/set: arrays up to 50, group id and state required, phone must be E.164", async () => {
    const base = { subscription_group_id: "g1", subscription_state: "subscribed" };
    expect((await c.rest("POST", "/subscription/status/set", { ...base, external_id: ids(50) })).status).toBe(201);
    expect((await c.rest("POST", "/subscription/status/set", { ...base, external_id: ids(51) })).status).toBe(400);
    expect((await c.rest("POST", "/subscription/status/set", { ...base, email: [] })).status).toBe(400);
    expect((await c.rest("POST", "/subscription/status/set", { ...base, phone: ["5551110003"] })).status).toBe(400);
    expect(
      (await c.rest("POST", "/subscription/status/set", { subscription_state: "subscribed", external_id: "u1" }))
        .status,
    ).toBe(400);
    expect(
      (await c.rest("POST", "/subscription/status/set", { ...base, subscription_state: "opted_in", external_id: "u1" }))
        .status,
    ).toBe(400);
    expect((await c.rest("POST", "/subscription/status/set", base)).status).toBe(400);
  });

  it("POST /subscription/status/set by phone updates profiles with that number", async () => {
    await c.rest("POST", "/subscription/status/set", {
      subscription_group_id: "sms",
      subscription_state: "subscribed",
      phone: ["+15551110001"],
    });
    expect(
      (await c.rest("GET", "/subscription/status/get?subscription_group_id=sms&phone=%2B15551110001")).body.status,
    ).toEqual({ "+15551110001": "Subscribed" });
  });

  it("POST /v2/subscription/status/set applies each entry; emails sharing profiles update all", async () => {
    const res = await c.rest("POST", "/v2/subscription/status/set", {
      subscription_groups: [
        { subscription_group_id: "g1", subscription_state: "subscribed", emails: ["shared@example.com"] },
        { subscription_group_id: "g2", subscription_state: "unsubscribed", external_ids: ["u3"] },
        { subscription_group_id: "g3", subscription_state: "subscribed", phones: ["+15551110003"] },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.message).toBe("success");
    const users = (await c.control("GET", "/state")).body.users as Array<{
      external_id: string;
      subscription_groups: object;
    }>;
    expect(Object.fromEntries(users.map((u) => [u.external_id, u.subscription_groups]))).toEqual({
      u1: { g1: "subscribed" },
      u2: { g1: "subscribed" },
      u3: { g2: "unsubscribed", g3: "subscribed" },
    });
  });

  it("POST /v2/subscription/status/set: emails and phones cannot both be in one entry; one of the three is required", async () => {
    const both = await c.rest("POST", "/v2/subscription/status/set", {
      subscription_groups: [
        {
          subscription_group_id: "g1",
          subscription_state: "subscribed",
          emails: ["solo@example.com"],
          phones: ["+15551110003"],
        },
      ],
    });
    expect(both.status).toBe(400);
    const none = await c.rest("POST", "/v2/subscription/status/set", {
      subscription_groups: [{ subscription_group_id: "g1", subscription_state: "subscribed" }],
    });
    expect(none.status).toBe(400);
  });

  it("POST /v2/subscription/status/set: external_ids, emails and phones up to 50 each; emails/phones at least 1", async () => {
    const entry = (extra: object) => ({
      subscription_groups: [{ subscription_group_id: "g1", subscription_state: "subscribed", ...extra }],
    });
    expect((await c.rest("POST", "/v2/subscription/status/set", entry({ external_ids: ids(50) }))).status).toBe(200);
    expect((await c.rest("POST", "/v2/subscription/status/set", entry({ external_ids: ids(51) }))).status).toBe(400);
    expect(
      (await c.rest("POST", "/v2/subscription/status/set", entry({ emails: ids(51).map((i) => `${i}@x.com`) }))).status,
    ).toBe(400);
    expect((await c.rest("POST", "/v2/subscription/status/set", entry({ emails: [] }))).status).toBe(400);
    expect((await c.rest("POST", "/v2/subscription/status/set", entry({ phones: [] }))).status).toBe(400);
  });

  it("POST /v2/subscription/status/set: a 400 in any entry changes nothing", async () => {
    await c.rest("POST", "/v2/subscription/status/set", {
      subscription_groups: [
        { subscription_group_id: "g1", subscription_state: "subscribed", external_ids: ["u1"] },
        { subscription_group_id: "g1", subscription_state: "bogus", external_ids: ["u2"] },
      ],
    });
    expect((await status("external_id=u1")).status).toEqual({ u1: "Unknown" });
  });

  it("GET /subscription/status/get reports Subscribed, Unsubscribed or Unknown with message success", async () => {
    await c.rest("POST", "/subscription/status/set", {
      subscription_group_id: "g1",
      subscription_state: "subscribed",
      external_id: ["u1"],
    });
    await c.rest("POST", "/subscription/status/set", {
      subscription_group_id: "g1",
      subscription_state: "unsubscribed",
      external_id: ["u3"],
    });
    const body = await status("external_id[]=u1&external_id[]=u3&external_id[]=nobody");
    expect(body).toEqual({ status: { u1: "Subscribed", u3: "Unsubscribed", nobody: "Unknown" }, message: "success" });
  });

  it("GET /subscription/status/get: external_id wins over email when both are sent", async () => {
    await c.rest("POST", "/subscription/status/set", {
      subscription_group_id: "g1",
      subscription_state: "subscribed",
      external_id: ["u3"],
    });
    expect((await status("external_id=u3&email=shared%40example.com")).status).toEqual({ u3: "Subscribed" });
  });

  it("GET /subscription/status/get: by email", async () => {
    await c.rest("POST", "/subscription/status/set", {
      subscription_group_id: "g1",
      subscription_state: "subscribed",
      email: "solo@example.com",
    });
    expect((await status("email=solo%40example.com")).status).toEqual({ "solo@example.com": "Subscribed" });
  });

  it("GET /subscription/status/get: sending both email and phone is an error", async () => {
    const res = await c.rest(
      "GET",
      "/subscription/status/get?subscription_group_id=g1&email=solo%40example.com&phone=%2B15551110003",
    );
    expect(res.status).toBe(400);
  });

  it("GET /subscription/status/get: subscription_group_id and one identifier are required; up to 50 ids", async () => {
    expect((await c.rest("GET", "/subscription/status/get?external_id=u1")).status).toBe(400);
    expect((await c.rest("GET", "/subscription/status/get?subscription_group_id=g1")).status).toBe(400);
    const fiftyOne = ids(51)
      .map((i) => `external_id[]=${i}`)
      .join("&");
    expect((await c.rest("GET", `/subscription/status/get?subscription_group_id=g1&${fiftyOne}`)).status).toBe(400);
    const fifty = ids(50)
      .map((i) => `external_id[]=${i}`)
      .join("&");
    expect((await c.rest("GET", `/subscription/status/get?subscription_group_id=g1&${fifty}`)).status).toBe(200);
  });
});
