import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OAuthClients } from "../../src/auth/oauth/clients.js";
import { ManualClock } from "../../src/clock.js";
import { loadEnv } from "../../src/config/env.js";
import { OAuthRepository } from "../../src/db/auth/oauthRepository.js";
import { startService, type Service } from "../../src/service.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";
import { startLocalIssuer, type LocalIssuer } from "../support/oauthIssuer.js";

/**
 * docs/oauth.md's curl block, run by bash as written against a connector and a local issuer: each
 * client authentication gets a token, and the token reads the SCIM API (issue 47, item 10). The
 * only substitutions are the block's four values: the connector's address, a client made here,
 * its secret, and an assertion the local issuer signed.
 */
const ROOT = path.resolve(import.meta.dirname, "../..");

describe("docs/oauth.md's curl for /oauth/token", () => {
  let database: TestDatabase;
  let service: Service;
  let issuer: LocalIssuer;
  const clock = new ManualClock();

  beforeAll(async () => {
    database = await createTestDatabase();
    issuer = await startLocalIssuer(clock);
    service = await startService({
      env: loadEnv({ PORT: "0", HOST: "127.0.0.1", RECONCILE_WORKERS: "0", RESYNC_CRON: "off", ...issuer.env() }),
      databaseUrl: database.url,
      clock,
    });
  });
  afterAll(async () => {
    await service?.close();
    await issuer?.close();
    await database?.drop();
  });

  it("gets a token with client_secret_basic, client_secret_post and a JWT assertion, and reads the SCIM API with it", async () => {
    const doc = await readFile(path.join(ROOT, "docs/oauth.md"), "utf8");
    const block = /<!-- oauth-token-curl -->\n+```sh\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(block, "docs/oauth.md has the oauth-token-curl block").toBeDefined();
    const made = await new OAuthClients(new OAuthRepository(database.db), clock).create("okta-prod");
    const script = block!
      .replace(/^CONNECTOR=.*$/m, `CONNECTOR=${service.url}`)
      .replace(/^CLIENT_SECRET=.*$/m, `CLIENT_SECRET='${made.secret}'`)
      .replace(/^ASSERTION=.*$/m, `ASSERTION='${await issuer.assertion()}'`);
    expect(script).toContain("CLIENT_ID=okta-prod");
    const { stdout } = await promisify(execFile)("bash", ["-euo", "pipefail", "-c", script], { cwd: ROOT });
    const answers = stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as unknown);
    const issued = { token_type: "Bearer", expires_in: 3600, scope: "scim" };
    expect(answers).toEqual([issued, issued, issued, { totalResults: 0 }]);
  });
});
