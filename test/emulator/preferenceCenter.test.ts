import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startClient, type Client } from "./harness.js";

const page = (extra: object = {}) => ({
  name: "Main",
  preference_center_title: "Your preferences",
  preference_center_page_html: "<html><body>prefs</body></html>",
  confirmation_page_html: "<html><body>thanks</body></html>",
  state: "active",
  options: { "meta-viewport-content": "width=device-width, initial-scale=1" },
  ...extra,
});

describe("PUT /preference_center/v1/{preferenceCenterExternalID}", () => {
  let c: Client;
  beforeAll(async () => {
    c = await startClient({ apiKeys: { "dev-api-key": "*", "second-workspace": "*" } });
  });
  afterAll(() => c.close());
  beforeEach(() => c.control("POST", "/reset"));
  const centers = async () => (await c.control("GET", "/state")).body.preferenceCenters;

  it("response carries preference_center_api_id, created_at, updated_at and message success", async () => {
    const res = await c.rest("PUT", "/preference_center/v1/pc-1", page());
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      preference_center_api_id: "pc-1",
      created_at: expect.any(String),
      updated_at: expect.any(String),
      message: "success",
    });
    expect(Date.parse(res.body.created_at)).not.toBeNaN();
  });

  it("content is replaced by the body and state moves to the given active/draft; created_at is kept", async () => {
    const first = await c.rest("PUT", "/preference_center/v1/pc-1", page());
    await c.control("POST", "/clock", { advanceMs: 5_000 });
    const second = await c.rest(
      "PUT",
      "/preference_center/v1/pc-1",
      page({ state: "draft", preference_center_page_html: "<p>v2</p>", options: {} }),
    );
    expect(second.body.created_at).toBe(first.body.created_at);
    expect(second.body.updated_at > first.body.updated_at).toBe(true);
    const [center] = await centers();
    expect(center).toMatchObject({ state: "draft", preference_center_page_html: "<p>v2</p>", options: {} });
  });

  it("the POST method of the document's sample does the same", async () => {
    expect((await c.rest("POST", "/preference_center/v1/pc-2", page())).status).toBe(200);
    expect((await centers()).map((p: { preference_center_api_id: string }) => p.preference_center_api_id)).toEqual([
      "pc-2",
    ]);
  });

  it("preference_center_page_html and confirmation_page_html are required", async () => {
    expect(
      (await c.rest("PUT", "/preference_center/v1/pc-1", page({ preference_center_page_html: undefined }))).status,
    ).toBe(400);
    expect(
      (await c.rest("PUT", "/preference_center/v1/pc-1", page({ confirmation_page_html: undefined }))).status,
    ).toBe(400);
  });

  it("state must be active or draft; options carries meta-viewport-content as a string", async () => {
    expect((await c.rest("PUT", "/preference_center/v1/pc-1", page({ state: "live" }))).status).toBe(400);
    expect(
      (await c.rest("PUT", "/preference_center/v1/pc-1", page({ options: { "meta-viewport-content": 1 } }))).status,
    ).toBe(400);
    expect((await c.rest("PUT", "/preference_center/v1/pc-1", page({ options: { other: "x" } }))).status).toBe(400);
  });

  it("the default page title is Preference Center; name is optional", async () => {
    await c.rest("PUT", "/preference_center/v1/pc-1", page({ preference_center_title: undefined, name: undefined }));
    expect((await centers())[0].preference_center_title).toBe("Preference Center");
  });

  it("rate limit: 10 requests per minute per workspace, then 429 with Retry-After and X-RateLimit headers", async () => {
    for (let i = 0; i < 10; i++) {
      const ok = await c.rest(i % 2 ? "POST" : "PUT", "/preference_center/v1/pc-1", page());
      expect(ok.status).toBe(200);
      expect(ok.headers.get("x-ratelimit-remaining")).toBe(String(9 - i));
    }
    const over = await c.rest("PUT", "/preference_center/v1/pc-1", page());
    expect(over.status).toBe(429);
    expect(over.body.message).toEqual(expect.any(String));
    expect(over.headers.get("x-ratelimit-limit")).toBe("10");
    expect(over.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(Number(over.headers.get("retry-after"))).toBeLessThanOrEqual(60);
    // Another workspace (API key) has its own window.
    expect((await c.rest("PUT", "/preference_center/v1/pc-1", page(), "second-workspace")).status).toBe(200);
    await c.control("POST", "/clock", { advanceMs: Number(over.headers.get("retry-after")) * 1000 });
    expect((await c.rest("PUT", "/preference_center/v1/pc-1", page())).status).toBe(200);
  });
});
