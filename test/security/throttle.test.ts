import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadEnv } from "../../src/config/env.js";
import { addressKey } from "../../src/auth/authThrottle.js";
import { generateToken, hashToken } from "../../src/auth/scimTokens.js";
import { TokenRepository } from "../../src/db/auth/tokenRepository.js";
import { startService, type Service } from "../../src/service.js";
import { csrfFrom } from "../support/adminHarness.js";
import { ADMIN_TOKEN, IDP_TOKEN, startStack, type Stack } from "../support/stack.js";
import { METRICS_TOKEN } from "../support/constants.js";

/**
 * Failed-authentication throttles (src/auth/authThrottle.ts) on the running service: per address
 * and global, per surface, shared by replicas through PostgreSQL, and never in a valid
 * credential's way. Client addresses come from X-Forwarded-For (the test client is the trusted
 * loopback proxy).
 */

const WRONG = "wrong-token-guess-0123456789abcdefgh";
const LIMITS = { AUTH_THROTTLE_PER_ADDRESS: "3", AUTH_THROTTLE_GLOBAL: "8", AUTH_THROTTLE_WINDOW_SECONDS: "300" };

describe("failed-authentication throttles", () => {
  let stack: Stack;
  let replica: Service;
  beforeAll(async () => {
    stack = await startStack({ workers: false, env: { METRICS_TOKEN, ...LIMITS } });
    replica = await startService({
      env: loadEnv({
        PORT: "0",
        HOST: "127.0.0.1",
        SCIM_TOKEN: IDP_TOKEN,
        ADMIN_TOKEN,
        MAPPING_FILE: stack.mappingFile,
        METRICS_TOKEN,
        ...LIMITS,
      }),
      databaseUrl: stack.database.url,
      platform: {
        url: stack.emulator.url,
        scimToken: "dev-scim-token",
        apiKey: "dev-api-key",
        requestOrigin: "scim-connector-test",
      },
      workers: false,
    });
  }, 120_000);
  afterAll(async () => {
    await replica?.close();
    await stack?.close();
  });

  const scim = (url: string, ip: string, token: string) =>
    request(url).get("/scim/v2/Users?count=1").set("X-Forwarded-For", ip).set("Authorization", `Bearer ${token}`);
  const adminApi = (url: string, ip: string, token: string) =>
    request(url).get("/admin/api/queue").set("X-Forwarded-For", ip).set("Authorization", `Bearer ${token}`);
  const metrics = async () =>
    (await request(stack.service.url).get("/metrics").set("Authorization", `Bearer ${METRICS_TOKEN}`)).text;

  it("SCIM: an address is throttled after its failures (RFC 7644 429 with Retry-After), across replicas, while a valid token from it still passes", async () => {
    const ip = "198.51.100.1";
    // Failures are counted in PostgreSQL: two on one replica and one on the other use up the allowance of 3.
    expect((await scim(stack.service.url, ip, WRONG)).status).toBe(401);
    expect((await scim(replica.url, ip, `${WRONG}-2`)).status).toBe(401);
    expect((await scim(stack.service.url, ip, `${WRONG}-3`)).status).toBe(401);
    const throttled = await scim(replica.url, ip, `${WRONG}-4`);
    expect(throttled.status).toBe(429);
    expect(throttled.headers["content-type"]).toMatch(/application\/scim\+json/);
    expect(throttled.body).toMatchObject({ schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"], status: "429" });
    const retryAfter = Number(throttled.headers["retry-after"]);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(300);
    // The IdP sharing that address is not locked out; another address is not affected at all.
    expect((await scim(stack.service.url, ip, IDP_TOKEN)).status).toBe(200);
    expect((await scim(replica.url, ip, IDP_TOKEN)).status).toBe(200);
    expect((await scim(stack.service.url, "198.51.100.2", WRONG)).status).toBe(401);
  });

  it("SCIM: past the global cap every failing request is refused, from any address, and valid ones still pass", async () => {
    // 198.51.100.2 used one failure above; 198.51.100.1's were stopped at its own limit (3 counted globally).
    let status = 401;
    let sent = 0;
    for (let i = 10; status === 401 && i < 40; i++, sent++)
      status = (await scim(stack.service.url, `198.51.100.${i}`, WRONG)).status;
    expect(status).toBe(429);
    expect(sent).toBe(8 - 3 - 1 + 1); // the global allowance (8) less the 4 failures already counted, then the refused one
    expect((await scim(replica.url, "192.0.2.99", WRONG)).status).toBe(429);
    expect((await scim(replica.url, "192.0.2.99", IDP_TOKEN)).status).toBe(200);
    // A request without any token is not a guess: 401, not counted.
    expect((await request(stack.service.url).get("/scim/v2/Users").set("X-Forwarded-For", "192.0.2.100")).status).toBe(
      401,
    );
  });

  it("SCIM: past the global cap a stored token neither process has seen yet (as after a restart) still passes, from any address", async () => {
    // The cap is still tripped by the test above; a token made with `token create` is unknown to both
    // replicas' caches, so each must look it up rather than refuse it with the guesses (issue 34).
    expect((await scim(stack.service.url, "192.0.2.98", WRONG)).status).toBe(429);
    const fresh = generateToken();
    await new TokenRepository(stack.database.db).create("okta-after-restart", hashToken(fresh), fresh.slice(0, 10));
    expect((await scim(stack.service.url, "192.0.2.97", fresh)).status).toBe(200);
    expect((await scim(replica.url, "192.0.2.96", fresh)).status).toBe(200);
    // Wrong tokens are still refused with 429 meanwhile.
    expect((await scim(replica.url, "192.0.2.95", `${WRONG}-after`)).status).toBe(429);
  });

  it("the admin API has its own throttle (JSON 429 with Retry-After), and SCIM's cap does not spill into it", async () => {
    const ip = "198.51.100.200";
    for (let i = 0; i < 3; i++) expect((await adminApi(stack.service.url, ip, WRONG)).status).toBe(401);
    const throttled = await adminApi(stack.service.url, ip, WRONG);
    expect(throttled.status).toBe(429);
    expect(throttled.body).toMatchObject({ error: "too_many_failures" });
    expect(Number(throttled.headers["retry-after"])).toBeGreaterThan(0);
    expect((await adminApi(stack.service.url, ip, ADMIN_TOKEN)).status).toBe(200);
  });

  it("the local admin sign-in is throttled per address with a 429 page, and the right token still signs in", async () => {
    const agent = request.agent(stack.service.url);
    const attempt = async (token: string) => {
      const csrf = csrfFrom((await agent.get("/admin/login")).text); // before the POST is built: it takes the jar's cookies then
      return agent.post("/admin/login").type("form").send({ _csrf: csrf, token });
    };
    for (let i = 0; i < 3; i++) expect((await attempt(WRONG)).status).toBe(401);
    const throttled = await attempt(WRONG);
    expect(throttled.status).toBe(429);
    expect(throttled.text).toContain("Too many failed sign-ins");
    expect(Number(throttled.headers["retry-after"])).toBeGreaterThan(0);
    expect((await attempt(ADMIN_TOKEN)).status).toBe(303);
  });

  it("failures and throttled requests are counted in /metrics, by surface", async () => {
    const text = await metrics();
    const value = (line: string) =>
      Number(new RegExp(`^${line.replace(/[{}]/g, "\\$&")} (\\d+)`, "m").exec(text)?.[1] ?? NaN);
    expect(value('scim_connector_auth_failures_total{surface="scim"}')).toBeGreaterThanOrEqual(5);
    expect(value('scim_connector_auth_throttled_total{surface="scim",scope="global"}')).toBeGreaterThanOrEqual(1);
    expect(value('scim_connector_auth_throttled_total{surface="admin-api",scope="address"}')).toBe(1);
    expect(value('scim_connector_auth_throttled_total{surface="admin-login",scope="address"}')).toBe(1);
  });
});

describe("addressKey", () => {
  it.each([
    ["203.0.113.9", "203.0.113.9"],
    ["::ffff:203.0.113.9", "203.0.113.9"],
    ["2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"],
    ["2001:db8:1:2::99", "2001:db8:1:2::/64"],
    ["2001:0DB8:0001:0002:ffff::1", "2001:db8:1:2::/64"],
    ["2001:db8::1", "2001:db8:0:0::/64"],
    ["::1", "0:0:0:0::/64"],
    [undefined, "unknown"],
  ])("%s → %s", (address, key) => {
    expect(addressKey(address)).toBe(key);
  });
});
