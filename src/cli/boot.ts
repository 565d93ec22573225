import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, link, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Database } from "../db/database.js";
import { generateToken, hashToken } from "../auth/scimTokens.js";
import { ConfigError, type Env } from "../config/env.js";
import { startEmbeddedPostgres, stopOrphanedServer, type EmbeddedDatabase } from "../db/embedded.js";
import { log } from "../logging/logger.js";
import { TokenRepository } from "../db/auth/tokenRepository.js";
import { adminAuthMode, resolveListenHost } from "../http/admin/exposure.js";
import { assertMetricsTokenBeyondLoopback } from "../http/metrics.js";
import { placeholderSettings } from "./placeholders.js";
import { deadRecord, runningDatabaseUrl } from "./runningDatabase.js";

/**
 * The embedded defaults of `npm start`: a PostgreSQL in EMBEDDED_PG_DIR (`.data/postgres`) when
 * DATABASE_URL is unset, and a development IdP token and admin token kept beside it (`.data/`) so
 * that every start prints the same ones. Only these defaults mint and print secrets; anywhere else (a DATABASE_URL, or
 * NODE_ENV=production) the operator supplies them and the service refuses to start without.
 */

export function usesEmbeddedDefaults(env: Env): boolean {
  return !env.DATABASE_URL && env.NODE_ENV !== "production";
}

/** Where the embedded defaults keep their files: the folder holding EMBEDDED_PG_DIR (`.data/` by default). */
export function embeddedDataDir(env: Env): string {
  return path.dirname(path.resolve(env.EMBEDDED_PG_DIR));
}

const DATABASE_URL_REQUIRED =
  "DATABASE_URL: is required when NODE_ENV=production (the embedded PostgreSQL is for development only). Set it to postgres://user:password@host:5432/database.";

/**
 * NODE_ENV=production has no development defaults for where changes go: the embedded emulator
 * (no PLATFORM_URL) and the demo mapping in config/ (no MAPPING_FILE) would look healthy while
 * provisioning nobody, or the wrong people. `raw` is the unparsed environment, to tell an
 * explicit MAPPING_FILE from the default.
 */
function assertProductionTargets(env: Env, raw: NodeJS.ProcessEnv = process.env): void {
  if (env.NODE_ENV !== "production") return;
  const problems: string[] = [];
  if (!env.DATABASE_URL) problems.push(DATABASE_URL_REQUIRED);
  if (!env.PLATFORM_URL)
    problems.push(
      "PLATFORM_URL: is required when NODE_ENV=production (the embedded emulator is for development only): set it to your platform's REST endpoint (e.g. https://rest.example.com) with PLATFORM_SCIM_TOKEN and PLATFORM_REQUEST_ORIGIN.",
    );
  if (!raw.MAPPING_FILE?.trim())
    problems.push(
      'MAPPING_FILE: is required when NODE_ENV=production (config/mapping.yaml is a demo that makes the IdP group "Platform Admins" company admins): ' +
        "write your mapping (start from config/mapping.example.yaml; check it with `scim-connector mapping check FILE`), mount it, and set MAPPING_FILE to its path.",
    );
  problems.push(...placeholderSettings(raw));
  if (problems.length) throw new ConfigError(problems);
}

/**
 * Everything `start` checks in the environment before it touches a database: production's targets,
 * the admin UI's exposure and /metrics beyond loopback, every problem listed at once (exit 78).
 * Returns the host to listen on. test/ops/kubernetes.unit.test.ts runs it on every pod of the
 * Kubernetes base, so the manifests pass the boot's own checks.
 */
export function checkStartEnv(env: Env, raw: NodeJS.ProcessEnv = process.env): { listenHost: string } {
  const problems: string[] = [];
  const collect = <T>(check: () => T): T | undefined => {
    try {
      return check();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(...error.problems);
      return undefined;
    }
  };
  collect(() => assertProductionTargets(env, raw));
  const listenHost = collect(() => resolveListenHost(env, raw));
  if (listenHost !== undefined) collect(() => assertMetricsTokenBeyondLoopback(listenHost, env.METRICS_TOKEN));
  if (problems.length || listenHost === undefined) throw new ConfigError(problems);
  return { listenHost };
}

/**
 * `callerHandlesSignals`: the caller stops the embedded server on SIGINT/SIGTERM itself, after its
 * drain (`start`). `useRunning`: a command beside a running `npm start` uses the database that
 * start recorded (cli/runningDatabase.ts) instead of starting a second server on the same folder.
 */
export async function resolveDatabase(
  env: Env,
  options: { callerHandlesSignals?: boolean; useRunning?: boolean } = {},
): Promise<{ url: string; embedded?: EmbeddedDatabase }> {
  if (env.DATABASE_URL) return { url: env.DATABASE_URL };
  if (env.NODE_ENV === "production") {
    throw new ConfigError([DATABASE_URL_REQUIRED]);
  }
  const running = options.useRunning ? await runningDatabaseUrl(env.EMBEDDED_PG_DIR) : undefined;
  if (running) return { url: running };
  if (options.callerHandlesSignals) await stopWhatAKilledTrialLeft(env.EMBEDDED_PG_DIR);
  const embedded = await startEmbeddedPostgres(env.EMBEDDED_PG_DIR, options);
  return { url: embedded.url, embedded };
}

/**
 * `start` after a trial that was killed (SIGKILL, a closed terminal): its record names a process
 * that is gone, and its PostgreSQL, detached, may still run on the folder. Both are stopped and
 * removed, and the start goes on; a record of a live trial is left alone (the start then refuses).
 */
async function stopWhatAKilledTrialLeft(pgDir: string): Promise<void> {
  const dead = await deadRecord(pgDir);
  if (!dead) return;
  const stopped = await stopOrphanedServer(pgDir);
  await dead.remove();
  log.warn("db", "a trial killed without stopping left its record behind: removed it, and stopped its PostgreSQL", {
    trialPid: dead.pid,
    postgresPid: stopped ?? null,
  });
}

/**
 * Outside the embedded defaults, what the service would otherwise have to invent must be given:
 * an IdP token (SCIM_TOKEN, or one made with `scim-connector token create`) and, in local mode,
 * ADMIN_TOKEN. With SAML and no ADMIN_TOKEN the admin JSON API is off (every call 401).
 * Throws a ConfigError naming each fix; runs after migrations, before anything listens.
 */
export async function assertOperatorSecrets(env: Env, db: Database): Promise<void> {
  if (usesEmbeddedDefaults(env)) return;
  const why = env.DATABASE_URL ? "DATABASE_URL is set" : "NODE_ENV=production";
  const problems: string[] = [];
  if (!env.ADMIN_TOKEN && adminAuthMode(env) === "local") {
    problems.push(
      `ADMIN_TOKEN: is required (${why}, so no token is generated): set it to a long random value (e.g. \`openssl rand -base64 32\`), ` +
        "or configure SAML sign-in for the admin UI (SAML_ENTRY_POINT, SAML_ISSUER, SAML_IDP_CERT, SAML_CALLBACK_URL; the admin API is then off unless ADMIN_TOKEN is set).",
    );
  }
  if (!env.SCIM_TOKEN && !(await new TokenRepository(db).list()).some((token) => token.revokedAt === null)) {
    problems.push(
      `SCIM_TOKEN: is required (${why}, so no IdP token is generated), unless a token exists: set SCIM_TOKEN to a long random value, ` +
        "or run `scim-connector token create --name okta` with the same DATABASE_URL and give its output to your IdP.",
    );
  }
  if (problems.length) throw new ConfigError(problems);
}

/** Token names are unique among active tokens; each development token gets its own. */
const devTokenName = (token: string) => `npm-start-${token.slice(5, 13)}`;

/**
 * The development IdP token (embedded defaults only), registered (hashed) on first use and kept
 * in `<dataDir>/idp-token` beside the embedded database, so every start prints the same one.
 * Nothing is ever revoked here: a process that finds the file missing or its token unknown adds
 * a token, and two processes starting at once agree on the first file written, so no process
 * cuts off the IdP another one printed for.
 */
export async function ensureDevScimToken(db: Database, dataDir: string): Promise<string> {
  const file = path.resolve(dataDir, "idp-token");
  const tokens = new TokenRepository(db);
  const existing = await readFile(file, "utf8").then(
    (text) => text.trim(),
    () => undefined,
  );
  if (existing && (await tokens.findActiveByHash(hashToken(existing)))) return existing;
  const token = generateToken();
  // Registered before the file is written: whoever reads the file finds its token active.
  const created = await tokens.create(devTokenName(token), hashToken(token), token.slice(0, 10));
  await mkdir(path.dirname(file), { recursive: true });
  // Written whole under a private name, then put in place atomically: a reader never sees half a
  // token, and of two processes starting together the first link wins (a stale file is replaced).
  const draft = `${file}.${process.pid}.tmp`;
  await writeFile(draft, token, { mode: 0o600 });
  try {
    if (existing) await rename(draft, file);
    else await link(draft, file);
    return token;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    await tokens.revoke(created.id); // ours was never shown to anyone
    return (await readFile(file, "utf8")).trim();
  } finally {
    await rm(draft, { force: true });
  }
}

const MIN_ADMIN_TOKEN_LENGTH = 16;

/**
 * The development admin token (embedded defaults only, when ADMIN_TOKEN is unset), kept in
 * `<dataDir>/admin-token` (mode 600), made on first start, so every start prints the same one.
 */
export async function ensureAdminToken(dataDir: string): Promise<string> {
  const file = path.resolve(dataDir, "admin-token");
  if (existsSync(file)) {
    const token = (await readFile(file, "utf8")).trim();
    if (token.length >= MIN_ADMIN_TOKEN_LENGTH) {
      await chmod(file, 0o600);
      return token;
    }
  }
  const token = `adm_${randomBytes(24).toString("base64url")}`;
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, token, { mode: 0o600 });
  await chmod(file, 0o600); // writeFile keeps the mode of an existing file
  return token;
}
