import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startClient, type Client } from "./harness.js";

/** Authentication rule 1: the permission table; 401 for a missing or unknown key, 403 without the permission. */

const TABLE: Array<{ method: string; path: string; permission: string }> = [
  { method: "POST", path: "/users/track", permission: "users.track" },
  { method: "POST", path: "/v2/subscription/status/set", permission: "subscription.status.set" },
  { method: "POST", path: "/subscription/status/set", permission: "subscription.status.set" },
  {
    method: "GET",
    path: "/subscription/status/get?subscription_group_id=g&external_id=u",
    permission: "subscription.status.get",
  },
  { method: "POST", path: "/email/status", permission: "email.status" },
  { method: "POST", path: "/email/blacklist", permission: "email.blacklist" },
  { method: "POST", path: "/email/blocklist", permission: "email.blacklist" },
  { method: "POST", path: "/email/bounce/remove", permission: "email.bounce.remove" },
  { method: "POST", path: "/email/spam/remove", permission: "email.spam.remove" },
  { method: "POST", path: "/sms/invalid_phone_numbers/remove", permission: "sms.invalid_phone_numbers.remove" },
  { method: "GET", path: "/sms/invalid_phone_numbers", permission: "sms.invalid_phone_numbers" },
  { method: "POST", path: "/users/delete", permission: "users.delete" },
  { method: "POST", path: "/users/alias/new", permission: "users.alias.new" },
  { method: "POST", path: "/users/alias/update", permission: "users.alias.update" },
  { method: "PUT", path: "/preference_center/v1/pc-1", permission: "preference_center.update" },
  { method: "POST", path: "/preference_center/v1/pc-1", permission: "preference_center.update" },
  { method: "GET", path: "/cdi/integrations", permission: "cdi.integration_list" },
  { method: "GET", path: "/cdi/integrations/i-1/job_sync_status", permission: "cdi.integration_job_status" },
];

describe("Authentication: API keys and the permission table", () => {
  let c: Client;
  beforeAll(async () => {
    const apiKeys: Record<string, "*" | string[]> = { "all-key": "*", "nothing-key": [] };
    for (const row of TABLE) apiKeys[`only-${row.permission}`] = [row.permission];
    c = await startClient({ apiKeys });
  });
  afterAll(() => c.close());

  it.each(TABLE)("$method $path without Authorization is 401 with a JSON message", async ({ method, path }) => {
    const res = await c.call(method, path, { body: {} });
    expect(res.status).toBe(401);
    expect(res.body.message).toEqual(expect.any(String));
  });

  it.each(TABLE)("$method $path with an unknown key is 401", async ({ method, path }) => {
    expect((await c.rest(method, path, {}, "no-such-key")).status).toBe(401);
  });

  it.each(TABLE)("$method $path with a key lacking $permission is 403", async ({ method, path }) => {
    const res = await c.rest(method, path, {}, "nothing-key");
    expect(res.status).toBe(403);
    expect(res.body.message).toContain("permission");
  });

  it.each(TABLE)(
    "$method $path with a key holding only $permission passes authentication",
    async ({ method, path, permission }) => {
      const res = await c.rest(method, path, {}, `only-${permission}`);
      expect([401, 403]).not.toContain(res.status);
    },
  );

  it("a key holding another endpoint's permission is 403 (permissions are per endpoint)", async () => {
    expect(
      (await c.rest("POST", "/email/status", { email: "a@b.co", subscription_state: "subscribed" }, "only-users.track"))
        .status,
    ).toBe(403);
  });

  it('"*" grants every permission', async () => {
    expect(
      (await c.rest("POST", "/email/status", { email: "a@b.co", subscription_state: "subscribed" }, "all-key")).status,
    ).toBe(200);
  });

  it("the SCIM token is not an API key and an API key is not a SCIM token", async () => {
    expect((await c.rest("POST", "/email/status", {}, "dev-scim-token")).status).toBe(401);
  });

  it("a request with a malformed JSON body is a 400 with a JSON message", async () => {
    const res = await c.call("POST", "/email/status", {
      rawBody: "{not json",
      headers: { "content-type": "application/json", authorization: "Bearer all-key" },
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe("Malformed JSON body");
  });
});
