import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCIM_HEADERS, startClient, type Client } from "./harness.js";

/** Nothing a caller sends produces a 500: odd bodies get a JSON answer below 500 (a 4xx, or a success with non-fatal errors). */

const ENDPOINTS = [
  "POST /users/track",
  "POST /users/alias/new",
  "POST /users/alias/update",
  "POST /users/delete",
  "POST /v2/subscription/status/set",
  "POST /subscription/status/set",
  "POST /email/status",
  "POST /email/blacklist",
  "POST /email/blocklist",
  "POST /email/bounce/remove",
  "POST /email/spam/remove",
  "POST /sms/invalid_phone_numbers/remove",
  "PUT /preference_center/v1/x",
  "POST /scim/v2/Users",
  "POST /_emulator/faults",
  "POST /_emulator/fixtures",
  "POST /_emulator/clock",
];

const ODD_BODIES: string[] = [
  "null",
  "[]",
  '"text"',
  "42",
  "{}",
  "[null]",
  '{"attributes":[null],"events":[1],"purchases":["x"]}',
  '{"user_aliases":[null],"alias_updates":[null],"external_ids":[null],"platform_ids":[1]}',
  '{"subscription_groups":[null, 1],"email":{"a":1},"phone":[1],"external_id":{}}',
  '{"preference_center_page_html":1,"confirmation_page_html":[],"options":[]}',
  '{"schemas":null,"userName":[],"name":"x","department":{},"permissions":{"appGroup":[null,{"appGroupName":"w","team":[null]}]}}',
  '{"integrations":[null],"syncJobs":[],"invalidPhones":{},"advanceMs":"1"}',
  "{not json",
];

describe("robustness: no odd request body produces a 500", () => {
  let c: Client;
  beforeAll(async () => {
    c = await startClient({ scimDailyLimit: 1_000_000 });
  });
  afterAll(() => c.close());

  it.each(ENDPOINTS)("%s answers every odd body below 500 with a JSON body", async (endpoint) => {
    const [method, path] = endpoint.split(" ") as [string, string];
    const statusOf = new Map<string, number>();
    for (const rawBody of ODD_BODIES) {
      await c.control("POST", "/reset");
      const res = await c.call(method, path, {
        rawBody,
        headers: {
          "content-type": "application/json",
          ...SCIM_HEADERS,
          authorization: path.startsWith("/scim") ? SCIM_HEADERS.authorization : "Bearer dev-api-key",
        },
      });
      expect(res.status, `${endpoint} with ${rawBody}`).toBeLessThan(500);
      expect(res.body, `${endpoint} with ${rawBody}`).toBeTypeOf("object");
      statusOf.set(rawBody, res.status);
    }
    // JSON that does not parse, or parses to null, is a 400; the rest only must not be a 5xx.
    expect([statusOf.get("null"), statusOf.get("{not json")]).toEqual([400, 400]);
  });

  it("odd query strings on the GET endpoints are 4xx, never 500", async () => {
    const queries = [
      "/subscription/status/get?subscription_group_id[]=a&external_id[x]=1",
      "/subscription/status/get?subscription_group_id=g&email=a&email=b&phone=1",
      "/sms/invalid_phone_numbers?limit=abc&offset=-1",
      "/sms/invalid_phone_numbers?phone_numbers[]=1&reason[]=x",
      "/cdi/integrations?cursor=x&cursor=y",
      "/cdi/integrations/x/job_sync_status?cursor=",
    ];
    for (const q of queries) {
      const res = await c.rest("GET", q);
      expect(res.status, q).toBeGreaterThanOrEqual(400);
      expect(res.status, q).toBeLessThan(500);
    }
    const scim = await c.call("GET", "/scim/v2/Users?filter=a&filter=b", { headers: SCIM_HEADERS });
    expect(scim.status).toBe(400);
  });
});
