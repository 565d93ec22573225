import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OAuthClients } from "../../src/auth/oauth/clients.js";
import { JWT_BEARER } from "../../src/auth/oauth/tokenService.js";
import { ManualClock } from "../../src/clock.js";
import { loadEnv } from "../../src/config/env.js";
import { OAuthRepository } from "../../src/db/auth/oauthRepository.js";
import { startService, type Service } from "../../src/service.js";
import { tokenCli } from "../support/cli.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";
import { startLocalIssuer, type LocalIssuer } from "../support/oauthIssuer.js";

/**
 * Issue 45, security 2–4: what the token endpoint promised and did not keep. Each refusal is checked
 * in the answer and in the database: no access token row was written for it (honesty 7).
 */
describe("the OAuth token endpoint keeps its promises", () => {
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

  const tokenRequest = (form: Record<string, string>) =>
    request(service.url).post("/oauth/token").type("form").send(form);
  const withAssertion = (assertion: string) =>
    tokenRequest({
      grant_type: "client_credentials",
      client_id: "entra-wif",
      client_assertion_type: JWT_BEARER,
      client_assertion: assertion,
    });
  const tokenRows = async () =>
    Number((await database.db.query<{ n: string }>(`SELECT count(*) AS n FROM oauth_access_tokens`))[0]!.n);
  /** `res` is the refusal `code` (its description matching `detail`), and no token row was written for it. */
  const expectError = async (res: request.Response, rowsBefore: number, code: string, detail: RegExp) => {
    expect(res.status, JSON.stringify(res.body)).toBe(code === "invalid_client" ? 401 : 400);
    expect(res.body.error).toBe(code);
    expect(res.body.error_description).toMatch(detail);
    expect(res.body.access_token).toBeUndefined();
    expect(await tokenRows(), "access token rows").toBe(rowsBefore);
  };
  const seconds = () => Math.floor(clock.now().getTime() / 1000);

  it("a spent jti replayed 30 s after exp (inside jose's 60 s of clock skew) is refused", async () => {
    const now = seconds();
    const assertion = await issuer.assertion({ iat: now, nbf: now, exp: now + 300, jti: "spent-then-late" });
    expect((await withAssertion(assertion)).status).toBe(200);
    clock.advance(330_000);
    const before = await tokenRows();
    await expectError(await withAssertion(assertion), before, "invalid_client", /jti was already used/);
  });

  it("a revoked assertion client stays revoked: the next assertion makes no new client, until an admin reinstates it", async () => {
    expect((await withAssertion(await issuer.assertion())).status).toBe(200);
    const revoked = await tokenCli(database.url, "client", "revoke", "entra-wif");
    expect(revoked.stdout).toContain("Revoked 1 client(s).");

    const before = await tokenRows();
    await expectError(await withAssertion(await issuer.assertion()), before, "invalid_client", /revoked/);
    const rows = await database.db.query<{ revoked: boolean }>(
      `SELECT revoked_at IS NOT NULL AS revoked FROM oauth_clients WHERE lower(name) = 'entra-wif'`,
    );
    expect(rows, "the revoked client only, no new one").toEqual([{ revoked: true }]);

    const reinstated = await tokenCli(database.url, "client", "reinstate", "entra-wif");
    expect(reinstated.stdout).toContain('Reinstated the assertion client "entra-wif"');
    const res = await withAssertion(await issuer.assertion());
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(
      (await request(service.url).get("/scim/v2/Users").auth(res.body.access_token, { type: "bearer" })).status,
    ).toBe(200);
  });

  it("a client registered for the code grant cannot take client_credentials with its secret: unauthorized_client", async () => {
    const made = await clients.create("okta-code", undefined, ["https://okta.example.test/oauth/callback"]);
    const before = await tokenRows();
    await expectError(
      await tokenRequest({ grant_type: "client_credentials", client_id: "okta-code", client_secret: made.secret }),
      before,
      "unauthorized_client",
      /authorization code grant/,
    );
    // Its wrong secret is still an authentication failure, not a hint that the client exists.
    await expectError(
      await tokenRequest({
        grant_type: "client_credentials",
        client_id: "okta-code",
        client_secret: `${made.secret}x`,
      }),
      before,
      "invalid_client",
      /not valid/,
    );
  });
});
