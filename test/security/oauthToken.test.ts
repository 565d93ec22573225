import { createPublicKey, generateKeyPairSync } from "node:crypto";
import { mkdtemp, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { SignJWT } from "jose";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { OAuthClients } from "../../src/auth/oauth/clients.js";
import { JWT_BEARER } from "../../src/auth/oauth/tokenService.js";
import { hashToken } from "../../src/auth/scimTokens.js";
import { ManualClock } from "../../src/clock.js";
import { loadEnv } from "../../src/config/env.js";
import { OAuthRepository } from "../../src/db/auth/oauthRepository.js";
import { startService, type Service } from "../../src/service.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";
import { AUDIENCE, ISSUER, startLocalIssuer, SUBJECT, TENANT, type LocalIssuer } from "../support/oauthIssuer.js";

/**
 * /oauth/token against a real database and a local issuer (keys made here, JWKS on loopback):
 * each accepted path gives a token the SCIM API takes, and each refusal the issue lists is an
 * RFC 6749 error with no token.
 */
describe("OAuth token endpoint", () => {
  let database: TestDatabase;
  let service: Service;
  let issuer: LocalIssuer;
  const clock = new ManualClock();
  let clients: OAuthClients;

  beforeAll(async () => {
    database = await createTestDatabase();
    issuer = await startLocalIssuer(clock);
    service = await startService({
      env: loadEnv({
        PORT: "0",
        HOST: "127.0.0.1",
        RECONCILE_WORKERS: "0",
        RESYNC_CRON: "off",
        AUTH_THROTTLE_PER_ADDRESS: "1000",
        OAUTH_JWT_JWKS_REFRESH_SECONDS: "1",
        ...issuer.env(),
      }),
      databaseUrl: database.url,
      clock,
    });
    clients = new OAuthClients(new OAuthRepository(database.db), clock);
  });
  afterAll(async () => {
    await service?.close();
    await issuer?.close();
    await database?.drop();
  });

  const tokenRequest = (form: Record<string, string>, basic?: [string, string]) => {
    const r = request(service.url).post("/oauth/token").type("form");
    if (basic) r.set("Authorization", `Basic ${Buffer.from(`${basic[0]}:${basic[1]}`).toString("base64")}`);
    return r.send(form);
  };
  const withAssertion = (assertion: string, extra: Record<string, string> = {}) =>
    tokenRequest({
      grant_type: "client_credentials",
      client_id: "entra-wif",
      client_assertion_type: JWT_BEARER,
      client_assertion: assertion,
      ...extra,
    });
  const scim = (token: string) => request(service.url).get("/scim/v2/Users").set("Authorization", `Bearer ${token}`);
  const expectError = async (res: request.Response, code: string, detail?: RegExp) => {
    expect(res.status, JSON.stringify(res.body)).toBe(code === "invalid_client" ? 401 : 400);
    expect(res.body.error).toBe(code);
    expect(res.body.access_token).toBeUndefined();
    expect(res.headers["cache-control"]).toBe("no-store");
    if (detail) expect(res.body.error_description).toMatch(detail);
  };

  it("client secret (Basic and form): a 60-minute token the SCIM API accepts; only the hash is stored", async () => {
    const made = await clients.create("okta-prod");
    const basic = await tokenRequest({ grant_type: "client_credentials" }, ["okta-prod", made.secret]);
    expect(basic.status, JSON.stringify(basic.body)).toBe(200);
    expect(basic.body).toMatchObject({ token_type: "Bearer", expires_in: 3600, scope: "scim" });
    expect(basic.headers["cache-control"]).toBe("no-store");
    expect((await scim(basic.body.access_token)).status).toBe(200);

    const form = await tokenRequest({
      grant_type: "client_credentials",
      client_id: "okta-prod",
      client_secret: made.secret,
    });
    expect(form.status).toBe(200);
    expect(form.body.access_token).not.toBe(basic.body.access_token);

    const dump =
      JSON.stringify(
        await database.db.query(`SELECT * FROM oauth_client_secrets UNION ALL SELECT * FROM oauth_client_secrets`),
      ) + JSON.stringify(await database.db.query(`SELECT * FROM oauth_access_tokens`));
    expect(dump).not.toContain(made.secret);
    expect(dump).not.toContain(basic.body.access_token);
  });

  it("several secrets are active at once; a wrong one, another client's, and an expired one are refused", async () => {
    const first = await clients.create("entra-secret", 30);
    const second = await clients.addSecret("entra-secret", 1);
    const other = await clients.create("someone-else");
    for (const secret of [first.secret, second.secret])
      expect((await tokenRequest({ grant_type: "client_credentials" }, ["entra-secret", secret])).status).toBe(200);
    await expectError(
      await tokenRequest({ grant_type: "client_credentials" }, ["entra-secret", `${first.secret}x`]),
      "invalid_client",
    );
    await expectError(
      await tokenRequest({ grant_type: "client_credentials" }, ["entra-secret", other.secret]),
      "invalid_client",
    );

    clock.advance(2 * 86_400_000); // the second secret's day is over; the first's 30 days are not
    await expectError(
      await tokenRequest({ grant_type: "client_credentials" }, ["entra-secret", second.secret]),
      "invalid_client",
      /expired/,
    );
    expect((await tokenRequest({ grant_type: "client_credentials" }, ["entra-secret", first.secret])).status).toBe(200);
  });

  it("an access token is refused once it expires, by the service's clock, even while the cache holds it", async () => {
    const made = await clients.create("expiring");
    const issued = await tokenRequest({ grant_type: "client_credentials" }, ["expiring", made.secret]);
    expect((await scim(issued.body.access_token)).status).toBe(200);
    clock.advance(59 * 60_000);
    expect((await scim(issued.body.access_token)).status).toBe(200);
    clock.advance(61_000);
    expect((await scim(issued.body.access_token)).status).toBe(401);

    // A day after its expiry the row goes, when a token is next issued (at most hourly per process).
    const stored = async () =>
      (
        await database.db.query(`SELECT 1 FROM oauth_access_tokens WHERE token_hash = $1`, [
          hashToken(issued.body.access_token),
        ])
      ).length;
    expect(await stored()).toBe(1);
    clock.advance(25 * 3_600_000);
    expect((await tokenRequest({ grant_type: "client_credentials" }, ["expiring", made.secret])).status).toBe(200);
    await vi.waitFor(async () => expect(await stored()).toBe(0), { timeout: 10_000, interval: 100 });
  });

  it("a JWT client assertion from the configured issuer gives a token; the same jti twice is refused", async () => {
    const assertion = await issuer.assertion({ jti: "once-only" });
    const res = await withAssertion(assertion);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await scim(res.body.access_token)).status).toBe(200);
    await expectError(await withAssertion(assertion), "invalid_client", /jti was already used/);
    const stored: { jti: string }[] = await database.db.query(`SELECT jti FROM oauth_assertion_jtis`);
    expect(stored.map((r) => r.jti)).toContain("once-only");
  });

  it("refuses wrong iss, aud, sub, tid, an expired or future assertion, one without exp, and a wrong client_id", async () => {
    const now = Math.floor(clock.now().getTime() / 1000);
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ iss: "https://login.example.test/other/v2.0" }, /iss/],
      [{ aud: "api://someone-else" }, /aud/],
      [{ sub: "another-app" }, /sub/],
      [{ tid: "tenant-9999" }, /tid/],
      [{ iat: now - 7200, nbf: now - 7200, exp: now - 3600 }, /expired/],
      [{ iat: now + 3600, nbf: now + 3600, exp: now + 7200 }, /nbf|iat/],
      [{ exp: undefined }, /exp/],
    ];
    for (const [claims, reason] of cases)
      await expectError(
        await withAssertion(await issuer.assertion({ iat: now, nbf: now, exp: now + 3600, ...claims })),
        "invalid_client",
        reason,
      );
    await expectError(
      await withAssertion(await issuer.assertion({ iat: now, nbf: now, exp: now + 3600 }), { client_id: "not-entra" }),
      "invalid_client",
      /client_id/,
    );
  });

  it("refuses alg none and an HS256 token keyed with the issuer's public key", async () => {
    const now = Math.floor(clock.now().getTime() / 1000);
    const claims = { iss: ISSUER, aud: AUDIENCE, sub: SUBJECT, tid: TENANT, iat: now, nbf: now, exp: now + 3600 };
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
    await expectError(
      await withAssertion(`${b64({ alg: "none", kid: "k1" })}.${b64(claims)}.`),
      "invalid_client",
      /algorithm|not a valid/,
    );
    const publicPem = createPublicKey({ key: issuer.jwks().keys[0]!, format: "jwk" }).export({
      type: "spki",
      format: "pem",
    });
    const hs = await new SignJWT(claims).setProtectedHeader({ alg: "HS256", kid: "k1" }).sign(Buffer.from(publicPem));
    await expectError(await withAssertion(hs), "invalid_client", /algorithm/);
  });

  it("an unknown kid refreshes the key set (bounded): a rotated key is accepted, a stranger's key refused", async () => {
    const before = issuer.fetches();
    const kid = await issuer.rotate();
    // The refresh waits out OAUTH_JWT_JWKS_REFRESH_SECONDS (1 s here) since the last fetch.
    const accepted = await vi.waitFor(
      async () => {
        const res = await withAssertion(
          await issuer.assertion(
            { iat: undefined, nbf: undefined, exp: Math.floor(clock.now().getTime() / 1000) + 600 },
            { kid },
          ),
        );
        if (res.status !== 200) throw new Error(JSON.stringify(res.body));
        return res;
      },
      { timeout: 15_000, interval: 300 },
    );
    expect(accepted.status).toBe(200);
    expect(issuer.fetches()).toBeGreaterThan(before);

    const stranger = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey;
    const afterRotation = issuer.fetches();
    const forged = await new SignJWT({
      iss: ISSUER,
      aud: AUDIENCE,
      sub: SUBJECT,
      tid: TENANT,
      exp: Math.floor(clock.now().getTime() / 1000) + 600,
    })
      .setProtectedHeader({ alg: "ES256", kid: "ghost" })
      .sign(stranger);
    const answers = await Promise.all(Array.from({ length: 20 }, () => withAssertion(forged)));
    for (const res of answers) await expectError(res, "invalid_client", /kid/);
    // Twenty unknown-kid requests cost at most a couple of fetches, not twenty.
    expect(issuer.fetches() - afterRotation).toBeLessThanOrEqual(3);
  });

  it("answers bad requests with RFC 6749 errors", async () => {
    await expectError(await tokenRequest({}), "invalid_request", /grant_type/);
    await expectError(await tokenRequest({ grant_type: "password" }), "unsupported_grant_type");
    await expectError(await tokenRequest({ grant_type: "client_credentials" }), "invalid_client");
    await expectError(
      await withAssertion("x", { client_assertion_type: "urn:something-else" }),
      "invalid_request",
      /client_assertion_type/,
    );
    const json = await request(service.url).post("/oauth/token").send({ grant_type: "client_credentials" });
    await expectError(json, "invalid_request", /x-www-form-urlencoded/);
    const get = await request(service.url).get("/oauth/token");
    expect(get.status).toBe(405);
  });
});

describe("OAuth token endpoint with the issuer's keys in a JWKS file", () => {
  let database: TestDatabase;
  let service: Service;
  let issuer: LocalIssuer;

  beforeAll(async () => {
    database = await createTestDatabase();
    issuer = await startLocalIssuer();
    const file = path.join(await mkdtemp(path.join(os.tmpdir(), "oauth-jwks-")), "keys.json");
    await writeFile(file, JSON.stringify(issuer.jwks()));
    service = await startService({
      env: loadEnv({
        PORT: "0",
        HOST: "127.0.0.1",
        RECONCILE_WORKERS: "0",
        RESYNC_CRON: "off",
        ...issuer.env(),
        OAUTH_JWT_JWKS_URL: "",
        OAUTH_JWT_JWKS_FILE: file,
      }),
      databaseUrl: database.url,
    });
  });
  afterAll(async () => {
    await service?.close();
    await issuer?.close();
    await database?.drop();
  });

  it("accepts an assertion signed by a key in the file, without fetching, and refuses an unknown kid", async () => {
    const send = async (assertion: string) =>
      request(service.url)
        .post("/oauth/token")
        .type("form")
        .send({ grant_type: "client_credentials", client_assertion_type: JWT_BEARER, client_assertion: assertion });
    const accepted = await send(await issuer.assertion());
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
    const kid = await issuer.rotate(); // published by the issuer's URL, not in the file
    const refused = await send(await issuer.assertion({}, { kid }));
    expect(refused.status).toBe(401);
    expect(refused.body.error_description).toMatch(/kid/);
    expect(issuer.fetches()).toBe(0);
  });
});

describe("OAuth token endpoint under the failed-auth throttle", () => {
  let database: TestDatabase;
  let service: Service;

  beforeAll(async () => {
    database = await createTestDatabase();
    service = await startService({
      env: loadEnv({
        PORT: "0",
        HOST: "127.0.0.1",
        RECONCILE_WORKERS: "0",
        RESYNC_CRON: "off",
        AUTH_THROTTLE_PER_ADDRESS: "3",
      }),
      databaseUrl: database.url,
    });
  });
  afterAll(async () => {
    await service?.close();
    await database?.drop();
  });

  it("counts wrong client secrets and answers 429 with Retry-After past the limit; a valid secret still passes", async () => {
    const made = await new OAuthClients(new OAuthRepository(database.db), { now: () => new Date() }).create("okta");
    const wrong = () =>
      request(service.url)
        .post("/oauth/token")
        .type("form")
        .send({ grant_type: "client_credentials", client_id: "okta", client_secret: "nope" });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await wrong()).status);
    expect(statuses.slice(0, 3)).toEqual([401, 401, 401]);
    const last = await wrong();
    expect(last.status).toBe(429);
    expect(Number(last.headers["retry-after"])).toBeGreaterThan(0);
    const good = await request(service.url)
      .post("/oauth/token")
      .type("form")
      .send({ grant_type: "client_credentials", client_id: "okta", client_secret: made.secret });
    expect(good.status).toBe(200);
  });
});
