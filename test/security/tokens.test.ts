import request from "supertest";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loadEnv } from "../../src/config/env.js";
import { startService, type Service } from "../../src/service.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";
import { tokenCli } from "../support/cli.js";

/** `scim-connector token create|list|revoke` as an operator runs it, against a real database. */
describe("IdP token commands", () => {
  let database: TestDatabase;
  let service: Service;
  const cli = (...args: string[]) => tokenCli(database.url, ...args);

  beforeAll(async () => {
    database = await createTestDatabase();
    service = await startService({
      env: loadEnv({ PORT: "0", HOST: "127.0.0.1", RECONCILE_WORKERS: "0", RESYNC_CRON: "off" }),
      databaseUrl: database.url,
    });
  });
  afterAll(async () => {
    await service?.close();
    await database?.drop();
  });

  it("creates a token shown once and stored only as a hash, lists it with last use, and revokes it", async () => {
    const created = await cli("create", "--name", "okta");
    const token = /(scim_[\w-]{20,})/.exec(created.stdout)?.[1];
    expect(token, created.stdout).toBeDefined();

    const rows: { token_hash: Buffer; token_prefix: string }[] = await database.db.query(
      `SELECT token_hash, token_prefix FROM scim_tokens WHERE name = 'okta'`,
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.token_hash.toString("utf8")).not.toContain(token!);
    expect(JSON.stringify(await database.db.query(`SELECT * FROM scim_tokens`))).not.toContain(token!);

    const scim = () => request(service.url).get("/scim/v2/Users").set("Authorization", `Bearer ${token}`);
    expect((await scim()).status).toBe(200);
    const listed = await cli("list");
    expect(listed.stdout).toMatch(/okta\s+scim_\S+…\s+active\s+last used 20\d\d-/);
    expect(listed.stdout).not.toContain(token!);

    const revoked = await cli("revoke", "okta");
    expect(revoked.stdout).toContain("Revoked 1 token");
    // The verifier caches answers for a few seconds (10 s); after that the token is refused.
    const refused = await vi.waitFor(
      async () => {
        const res = await scim();
        if (res.status === 200) throw new Error("the revoked token is still accepted");
        return res;
      },
      { timeout: 15_000, interval: 250 },
    );
    expect(refused.status).toBe(401);
    expect(refused.headers["www-authenticate"]).toMatch(/^Bearer/);
    expect((await cli("list")).stdout).toMatch(/okta\s+scim_\S+…\s+revoked/);
  }, 60_000);

  it("says what is wrong when a subcommand is missing its argument", async () => {
    await expect(cli("create")).rejects.toMatchObject({
      stderr: expect.stringContaining("token create needs --name NAME"),
    });
  });
});
