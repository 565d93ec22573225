import { execFile } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashToken } from "../../src/auth/scimTokens.js";
import { TokenRepository } from "../../src/db/auth/tokenRepository.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";

/**
 * The development IdP token with two processes on one database: neither may cut off the IdP the
 * other printed a token for (each start used to revoke the previous development token).
 */

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../..");

async function devTokenOf(databaseUrl: string, dataDir: string): Promise<string> {
  const { stdout } = await run(
    process.execPath,
    ["--import", "tsx", path.join(ROOT, "test/security/devTokenProcess.ts"), databaseUrl, dataDir],
    { cwd: ROOT, timeout: 60_000 },
  );
  return stdout.trim();
}

describe("the development IdP token across processes", () => {
  let database: TestDatabase;
  let tokens: TokenRepository;
  beforeAll(async () => {
    database = await createTestDatabase();
    tokens = new TokenRepository(database.db);
  });
  afterAll(async () => database?.drop());

  const active = async (token: string) => (await tokens.findActiveByHash(hashToken(token))) !== undefined;

  it("two processes with their own data directories: both tokens stay valid", { timeout: 120_000 }, async () => {
    const first = await devTokenOf(database.url, await mkdtemp(path.join(os.tmpdir(), "dev-token-a-")));
    const second = await devTokenOf(database.url, await mkdtemp(path.join(os.tmpdir(), "dev-token-b-")));
    expect(first).toMatch(/^scim_/);
    expect(second).not.toBe(first);
    expect(await active(first)).toBe(true);
    expect(await active(second)).toBe(true);
  });

  it(
    "two processes starting together on one data directory print the same token, and it stays valid",
    { timeout: 120_000 },
    async () => {
      const dir = await mkdtemp(path.join(os.tmpdir(), "dev-token-shared-"));
      const [a, b] = await Promise.all([devTokenOf(database.url, dir), devTokenOf(database.url, dir)]);
      expect(a).toBe(b);
      expect(await active(a)).toBe(true);
      // A restart prints the same one again.
      expect(await devTokenOf(database.url, dir)).toBe(a);
    },
  );
});
