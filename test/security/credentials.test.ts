import request from "supertest";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loadEnv } from "../../src/config/env.js";
import { startService, type Service } from "../../src/service.js";
import { ADMIN_TOKEN } from "../support/constants.js";
import { signInLocally } from "../support/adminHarness.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";
import { tokenCli } from "../support/cli.js";

/**
 * One authentication check, every credential listed: a bearer token and an OAuth client made with
 * the CLI as an operator runs it, both accepted by the SCIM API, and `token list` and the admin
 * UI's Credentials page showing each with its kind, last use and expiry; revoking the client stops
 * its access tokens.
 */
describe("IdP credentials: bearer tokens and OAuth clients through one check, all listed", () => {
  let database: TestDatabase;
  let service: Service;
  const cli = (...args: string[]) => tokenCli(database.url, ...args);

  beforeAll(async () => {
    database = await createTestDatabase();
    service = await startService({
      env: loadEnv({ PORT: "0", HOST: "127.0.0.1", RECONCILE_WORKERS: "0", RESYNC_CRON: "off", ADMIN_TOKEN }),
      databaseUrl: database.url,
    });
  });
  afterAll(async () => {
    await service?.close();
    await database?.drop();
  });

  it("lists every credential with kind, last use and expiry, in the CLI and the admin UI; a revoked client's tokens stop", async () => {
    const bearer = /(scim_[\w-]{20,})/.exec((await cli("create", "--name", "okta-bearer")).stdout)?.[1];
    const made = (await cli("client", "create", "--name", "entra-app", "--expires-days", "10")).stdout;
    const secret = /client_secret\s+(scs_[\w-]{20,})/.exec(made)?.[1];
    expect(bearer, "bearer token printed").toBeDefined();
    expect(secret, made).toBeDefined();

    const issued = await request(service.url)
      .post("/oauth/token")
      .type("form")
      .send({ grant_type: "client_credentials", client_id: "entra-app", client_secret: secret });
    expect(issued.status).toBe(200);
    const accessToken = issued.body.access_token as string;
    const scim = (token: string) => request(service.url).get("/scim/v2/Users").set("Authorization", `Bearer ${token}`);
    expect((await scim(bearer!)).status).toBe(200);
    expect((await scim(accessToken)).status).toBe(200);

    // Last use is written behind the request: wait until the list shows it for both kinds.
    const listed = await vi.waitFor(
      async () => {
        const { stdout } = await cli("list");
        if (!/access token\s+entra-app\s+-\s+active\s+last used 20/.test(stdout)) throw new Error(stdout);
        return stdout;
      },
      { timeout: 20_000, interval: 500 },
    );
    expect(listed).toMatch(/bearer token\s+okta-bearer\s+scim_\S+…\s+active\s+last used 20\d\d-\S+\s+expires never/);
    expect(listed).toMatch(/client secret\s+entra-app\s+scs_\S+…\s+active\s+last used 20\d\d-\S+\s+expires 20\d\d-/);
    expect(listed).toMatch(/access token\s+entra-app\s+-\s+active\s+last used 20\d\d-\S+\s+expires 20\d\d-/);
    for (const secretText of [bearer!, secret!, accessToken]) expect(listed).not.toContain(secretText);

    const agent = request.agent(service.url);
    await signInLocally(agent);
    const page = await agent.get("/admin/credentials");
    expect(page.status).toBe(200);
    for (const text of ["bearer token", "client secret", "access token", "okta-bearer", "entra-app"])
      expect(page.text).toContain(text);
    for (const secretText of [bearer!, secret!, accessToken]) expect(page.text).not.toContain(secretText);

    expect((await cli("client", "revoke", "entra-app")).stdout).toContain("Revoked 1 client");
    const refused = await vi.waitFor(
      async () => {
        const res = await scim(accessToken);
        if (res.status === 200) throw new Error("a revoked client's access token is still accepted");
        return res;
      },
      { timeout: 15_000, interval: 250 },
    );
    expect(refused.status).toBe(401);
    const again = await request(service.url)
      .post("/oauth/token")
      .type("form")
      .send({ grant_type: "client_credentials", client_id: "entra-app", client_secret: secret });
    expect(again.status).toBe(401);
  }, 90_000);
});
