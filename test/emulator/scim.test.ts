import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { RATE_LIMITS } from "../../src/emulator/pipeline/rateLimits.js";
import { parseUserNameFilter } from "../../src/emulator/routes/scim.js";
import { dashboardUser, SCIM_HEADERS, startClient, type Client } from "./harness.js";

describe("SCIM family /scim/v2/Users", () => {
  let c: Client;
  beforeAll(async () => {
    c = await startClient();
  });
  afterAll(() => c.close());
  beforeEach(() => c.control("POST", "/reset"));

  it("POST creates the account and the response carries id, lastSignInAt and generated appGroupId/teamId", async () => {
    const res = await c.scim("POST", "/scim/v2/Users", dashboardUser("ada@example.com"));
    expect(res.status).toBe(201);
    expect(res.body.id).toEqual(expect.any(String));
    expect(res.body.userName).toBe("ada@example.com");
    expect(Date.parse(res.body.lastSignInAt)).not.toBeNaN();
    const ws = res.body.permissions.appGroup[0];
    expect(ws.appGroupId).toEqual(expect.any(String));
    expect(ws.team[0].teamId).toEqual(expect.any(String));
    expect(ws.appGroupName).toBe("Production");
  });

  it("POST with an email that already exists is 409 with the documented body", async () => {
    await c.scim("POST", "/scim/v2/Users", dashboardUser("ada@example.com"));
    const res = await c.scim("POST", "/scim/v2/Users", dashboardUser("ADA@example.com"));
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"],
      detail: "User already exists in the database.",
      status: 409,
    });
  });

  it.each(["schemas", "userName", "name", "department", "permissions"])(
    "POST needs the complete resource: missing %s is 400",
    async (field) => {
      const body: Record<string, unknown> = dashboardUser("x@example.com");
      delete body[field];
      const res = await c.scim("POST", "/scim/v2/Users", body);
      expect(res.status).toBe(400);
      expect(res.body.schemas).toEqual(["urn:ietf:params:scim:api:messages:2.0:Error"]);
      expect(res.body.detail).toContain(field);
    },
  );

  it("GET /scim/v2/Users/{id} returns the resource", async () => {
    const created = await c.scim("POST", "/scim/v2/Users", dashboardUser("ada@example.com"));
    const res = await c.scim("GET", `/scim/v2/Users/${created.body.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(created.body);
  });

  it("GET by id of a missing account is 404 with the documented body and content type", async () => {
    const res = await c.scim("GET", "/scim/v2/Users/nope");
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toBe("text/html; charset=UTF-8");
    expect(res.body).toEqual({
      schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"],
      detail: "User not found",
      status: 404,
    });
  });

  it('GET ?filter=userName eq "<email>" returns a ListResponse with the account and its id', async () => {
    const created = await c.scim("POST", "/scim/v2/Users", dashboardUser("ada@example.com"));
    const res = await c.scim("GET", `/scim/v2/Users?filter=${encodeURIComponent('userName eq "ada@example.com"')}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      schemas: ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
      totalResults: 1,
      Resources: [created.body],
    });
  });

  it("GET filter accepts the URL-encoded form, even encoded twice, and + for spaces", async () => {
    await c.scim("POST", "/scim/v2/Users", dashboardUser("ada@example.com"));
    const twice = encodeURIComponent(encodeURIComponent('userName eq "ada@example.com"'));
    expect((await c.scim("GET", `/scim/v2/Users?filter=${twice}`)).body.totalResults).toBe(1);
    expect((await c.scim("GET", `/scim/v2/Users?filter=userName+eq+%22ada%40example.com%22`)).body.totalResults).toBe(
      1,
    );
  });

  it("GET filter with no match returns totalResults 0 and an empty Resources", async () => {
    const res = await c.scim("GET", `/scim/v2/Users?filter=${encodeURIComponent('userName eq "none@example.com"')}`);
    expect(res.status).toBe(200);
    expect(res.body.totalResults).toBe(0);
    expect(res.body.Resources).toEqual([]);
  });

  it("there is no list-all: GET without a filter, or with another filter, is 400 invalidFilter", async () => {
    expect((await c.scim("GET", "/scim/v2/Users")).status).toBe(400);
    const other = await c.scim("GET", `/scim/v2/Users?filter=${encodeURIComponent('name.givenName eq "Ada"')}`);
    expect(other.status).toBe(400);
    expect(other.body.scimType).toBe("invalidFilter");
  });

  it("DELETE is 204 with content type text/html; charset=UTF-8 and permanently deletes", async () => {
    const created = await c.scim("POST", "/scim/v2/Users", dashboardUser("ada@example.com"));
    const res = await c.scim("DELETE", `/scim/v2/Users/${created.body.id}`);
    expect(res.status).toBe(204);
    expect(res.headers.get("content-type")).toBe("text/html; charset=UTF-8");
    expect(res.text).toBe("");
    expect((await c.scim("GET", `/scim/v2/Users/${created.body.id}`)).status).toBe(404);
    expect((await c.scim("POST", "/scim/v2/Users", dashboardUser("ada@example.com"))).status).toBe(201);
  });

  it("DELETE of a missing account is 404 with the documented body and text/html content type", async () => {
    const res = await c.scim("DELETE", "/scim/v2/Users/missing");
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toBe("text/html; charset=UTF-8");
    expect(JSON.parse(res.text)).toEqual({
      schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"],
      detail: "User not found",
      status: 404,
    });
  });

  it("PUT (not shown) replaces the resource and keeps id, userName and lastSignInAt", async () => {
    const created = await c.scim("POST", "/scim/v2/Users", dashboardUser("ada@example.com"));
    const replacement = dashboardUser("ada@example.com", {
      department: "marketing",
      permissions: { companyPermissions: ["admin"], appGroup: [] },
    });
    const res = await c.scim("PUT", `/scim/v2/Users/${created.body.id}`, replacement);
    expect(res.status).toBe(200);
    expect(res.body.department).toBe("marketing");
    expect(res.body.permissions).toEqual({ companyPermissions: ["admin"], appGroup: [] });
    expect(res.body.lastSignInAt).toBe(created.body.lastSignInAt);
    expect((await c.scim("GET", `/scim/v2/Users/${created.body.id}`)).body).toEqual(res.body);
  });

  it("PUT that changes userName is 400 (userName cannot be changed through the API)", async () => {
    const created = await c.scim("POST", "/scim/v2/Users", dashboardUser("ada@example.com"));
    const res = await c.scim("PUT", `/scim/v2/Users/${created.body.id}`, dashboardUser("other@example.com"));
    expect(res.status).toBe(400);
    expect(res.body.scimType).toBe("mutability");
  });

  it("PUT of a missing account is 404", async () => {
    expect((await c.scim("PUT", "/scim/v2/Users/missing", dashboardUser("ada@example.com"))).status).toBe(404);
  });

  it("the same workspace name gets the same generated appGroupId on every user", async () => {
    const a = await c.scim("POST", "/scim/v2/Users", dashboardUser("a@example.com"));
    const b = await c.scim("POST", "/scim/v2/Users", dashboardUser("b@example.com"));
    expect(a.body.permissions.appGroup[0].appGroupId).toBe(b.body.permissions.appGroup[0].appGroupId);
    expect(a.body.permissions.appGroup[0].team[0].teamId).toBe(b.body.permissions.appGroup[0].team[0].teamId);
  });

  it("SCIM auth: a missing or wrong SCIM token is 401", async () => {
    expect((await c.call("GET", "/scim/v2/Users/x")).status).toBe(401);
    const wrong = await c.call("GET", "/scim/v2/Users/x", {
      headers: { ...SCIM_HEADERS, authorization: "Bearer dev-api-key" },
    });
    expect(wrong.status).toBe(401);
  });

  it("SCIM auth: X-Request-Origin is required", async () => {
    const res = await c.call("GET", "/scim/v2/Users/x", { headers: { authorization: SCIM_HEADERS.authorization } });
    expect(res.status).toBe(401);
    expect(res.body.detail).toContain("X-Request-Origin");
  });
});

describe("SCIM X-Request-Origin allow-list (EMULATOR_REQUEST_ORIGINS)", () => {
  it("when origins are configured, only those are accepted", async () => {
    const c = await startClient({ requestOrigins: ["https://allowed.example.com"] });
    try {
      const denied = await c.call("GET", "/scim/v2/Users/x", { headers: SCIM_HEADERS });
      expect(denied.status).toBe(401);
      const allowed = await c.call("GET", "/scim/v2/Users/x", {
        headers: { ...SCIM_HEADERS, "x-request-origin": "https://allowed.example.com" },
      });
      expect(allowed.status).toBe(404);
    } finally {
      await c.close();
    }
  });
});

describe("SCIM daily budget: 5,000 requests per day per company, UTC day", () => {
  it("every authenticated SCIM request counts whatever its answer; the 5,001st is 429 with Retry-After and X-RateLimit headers; the next UTC day resets", async () => {
    const c = await startClient();
    try {
      for (let i = 0; i < 4_999; i++)
        c.emulator.state.rateLimiter.take(RATE_LIMITS.scimDaily, c.emulator.state.nowMs());
      const last = await c.scim("GET", "/scim/v2/Users/missing"); // a 404 still counts
      expect(last.status).toBe(404);
      expect(last.headers.get("x-ratelimit-remaining")).toBe("0");
      expect((await c.control("GET", "/stats")).body.scimDaily).toEqual({ used: 5000, limit: 5000 });
      const over = await c.scim("POST", "/scim/v2/Users", dashboardUser("ada@example.com"));
      expect(over.status).toBe(429);
      expect(over.headers.get("x-ratelimit-limit")).toBe("5000");
      expect(over.headers.get("x-ratelimit-remaining")).toBe("0");
      const now = c.emulator.state.nowMs();
      const nextMidnight = Math.floor(now / 86_400_000 + 1) * 86_400_000;
      expect(Number(over.headers.get("x-ratelimit-reset"))).toBe(nextMidnight / 1000);
      expect(Number(over.headers.get("retry-after"))).toBe(Math.ceil((nextMidnight - now) / 1000));
      await c.control("POST", "/clock", { advanceMs: nextMidnight - now });
      expect((await c.scim("POST", "/scim/v2/Users", dashboardUser("ada@example.com"))).status).toBe(201);
      expect((await c.control("GET", "/stats")).body.scimDaily.used).toBe(1);
    } finally {
      await c.close();
    }
  });

  it("unauthenticated SCIM requests do not count against the budget", async () => {
    const c = await startClient();
    try {
      await c.call("GET", "/scim/v2/Users/x");
      expect((await c.control("GET", "/stats")).body.scimDaily.used).toBe(0);
    } finally {
      await c.close();
    }
  });
});

describe("parseUserNameFilter (pure)", () => {
  it.each([
    ['userName eq "a@b.com"', "a@b.com"],
    ['username EQ "a@b.com"', "a@b.com"],
    ['  userName   eq  "a@b.com" ', "a@b.com"],
    ["userName%20eq%20%22a%40b.com%22", "a@b.com"],
    ['userName eq "a\\"b@c.com"', 'a"b@c.com'],
    ["userName eq a@b.com", undefined],
    ['userName ne "a@b.com"', undefined],
    ['userName eq "a@b.com" and active eq true', undefined],
  ])("%s → %s", (input, expected) => {
    expect(parseUserNameFilter(input)).toBe(expected);
  });
});

describe("the SCIM journal (benchmarks count calls per account with it)", () => {
  let c: Client;
  beforeAll(async () => {
    c = await startClient({ scimJournal: true });
  });
  afterAll(() => c.close());

  it("records every SCIM user request at the emulator's clock with the userName it concerns", async () => {
    const created = await c.scim("POST", "/scim/v2/Users", dashboardUser("jo@example.com"));
    const id = created.body.id as string;
    await c.scim("GET", `/scim/v2/Users?filter=${encodeURIComponent('userName eq "jo@example.com"')}`);
    await c.scim("PUT", `/scim/v2/Users/${id}`, dashboardUser("jo@example.com"));
    await c.scim("POST", "/scim/v2/Users", dashboardUser("jo@example.com")); // a 409 is a call too
    await c.scim("DELETE", `/scim/v2/Users/${id}`);
    await c.scim("DELETE", `/scim/v2/Users/${id}`); // the account is gone: no userName
    const journal = c.emulator.state.scimJournal!;
    expect(journal.map((e) => [e.method, e.userName])).toEqual([
      ["POST", "jo@example.com"],
      ["GET", "jo@example.com"],
      ["PUT", "jo@example.com"],
      ["POST", "jo@example.com"],
      ["DELETE", "jo@example.com"],
      ["DELETE", null],
    ]);
    expect(journal.every((e) => Math.abs(e.at - c.emulator.state.nowMs()) < 60_000)).toBe(true);
  });

  it("says for each request its status and what the platform then held for the userName (bench:budget's revocations)", async () => {
    const journal = c.emulator.state.scimJournal!;
    journal.length = 0;
    const created = await c.scim("POST", "/scim/v2/Users", dashboardUser("ann@example.com"));
    const id = created.body.id as string;
    const emptied = { companyPermissions: [], appGroup: [] };
    await c.scim("PUT", `/scim/v2/Users/${id}`, dashboardUser("ann@example.com", { permissions: emptied }));
    await c.scim("POST", "/scim/v2/Users", dashboardUser("ann@example.com"));
    await c.scim("DELETE", `/scim/v2/Users/${id}`);
    await expect.poll(() => journal.filter((e) => e.status !== undefined).length).toBe(4);
    expect(journal.map((e) => [e.method, e.status, e.permissionsAfter])).toEqual([
      ["POST", 201, created.body.permissions],
      ["PUT", 200, emptied],
      ["POST", 409, emptied], // refused: the account is unchanged
      ["DELETE", 204, null],
    ]);
  });

  it("is off unless asked for", async () => {
    const plain = await startClient();
    await plain.scim("POST", "/scim/v2/Users", dashboardUser("jo@example.com"));
    expect(plain.emulator.state.scimJournal).toBeUndefined();
    await plain.close();
  });
});
