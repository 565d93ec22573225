import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import type { DataSource } from "typeorm";
import { generateToken, hashToken } from "./auth/scimTokens.js";
import type { Env } from "./config/env.js";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "./db/embedded.js";
import { TokenRepository } from "./db/tokenRepository.js";

/**
 * The embedded defaults of `npm start`: a PostgreSQL under .data/ when DATABASE_URL is unset, and
 * a development IdP token kept under .data/ so that every start prints the same one.
 */

export async function resolveDatabase(env: Env): Promise<{ url: string; embedded?: EmbeddedDatabase }> {
  if (env.DATABASE_URL) return { url: env.DATABASE_URL };
  const embedded = await startEmbeddedPostgres(env.EMBEDDED_PG_DIR);
  return { url: embedded.url, embedded };
}

const DEV_TOKEN_NAME = "npm-start";

/** Returns the local development IdP token, registering it (hashed) on first use. */
export async function ensureDevScimToken(db: DataSource, dataDir: string): Promise<string> {
  const file = path.resolve(dataDir, "idp-token");
  const tokens = new TokenRepository(db);
  if (existsSync(file)) {
    const token = (await readFile(file, "utf8")).trim();
    if (await tokens.findActiveByHash(hashToken(token))) return token;
  }
  const token = generateToken();
  await tokens.revoke(DEV_TOKEN_NAME);
  await tokens.create(DEV_TOKEN_NAME, hashToken(token), token.slice(0, 10));
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, token, { mode: 0o600 });
  return token;
}
