import { ConfigError, type Env } from "../config/env.js";
import {
  assertOperatorSecrets,
  checkStartEnv,
  embeddedDataDir,
  ensureAdminToken,
  ensureDevScimToken,
  resolveDatabase,
  usesEmbeddedDefaults,
} from "./boot.js";
import { startEmulator } from "../emulator/index.js";
import { adminAuthMode, isLoopbackHost } from "../http/admin/exposure.js";
import type { PlatformTarget } from "../platform/target.js";
import { assertPlatformBinding, platformIdentity } from "../reconcile/platformBinding.js";
import { systemClock } from "../clock.js";
import { installProcessGuards } from "../processGuards.js";
import { startService } from "../service.js";
import { stopGracefullyOnSignals } from "./shutdown.js";
import { recordRunningDatabase } from "./runningDatabase.js";
import { emulatorOptionsFromEnv } from "./emulator.js";

/**
 * `scim-connector start`: the service in this process (the embedded PostgreSQL and emulator when
 * none is configured), its banner of URLs and tokens, and the drain on SIGTERM.
 */

export async function start(env: Env): Promise<void> {
  installProcessGuards(); // one request's failure must never stop the service
  try {
    await startAndPrintBanner(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\nFix these environment variables and start again.\n`);
    process.exit(78); // EX_CONFIG
  }
}

async function startAndPrintBanner(env: Env): Promise<void> {
  const { listenHost } = checkStartEnv(env);
  // The embedded PostgreSQL is stopped after the drain (stopGracefullyOnSignals below), not at the signal.
  const database = await resolveDatabase(env, { callerHandlesSignals: true });
  // The other commands use this database while this process runs (cli/runningDatabase.ts).
  const forgetDatabase = database.embedded
    ? await recordRunningDatabase(env.EMBEDDED_PG_DIR, database.url)
    : () => Promise.resolve();
  // Only the embedded development defaults invent (and print) tokens; see docs/operations.md.
  const devDefaults = usesEmbeddedDefaults(env);
  // No platform configured: the emulator stands in for it, on a second port.
  const emulator = env.PLATFORM_URL ? undefined : await startEmbeddedEmulator(env);
  const adminToken = env.ADMIN_TOKEN ?? (devDefaults ? await ensureAdminToken(embeddedDataDir(env)) : undefined);
  // Without SAML the admin UI signs in with one shared token: listen on loopback unless told otherwise.
  const effective: Env = { ...env, ADMIN_TOKEN: adminToken, HOST: listenHost };
  const service = await startService({
    env: effective,
    databaseUrl: database.url,
    platform: emulator?.target,
    beforeListening: async (db) => {
      await assertOperatorSecrets(env, db);
      // A database reused against another platform plans nothing until `platform forget` (docs/operations.md).
      await assertPlatformBinding(db, platformIdentity(env.PLATFORM_URL), systemClock.now());
    },
  }).catch(async (error: unknown) => {
    await emulator?.running.close();
    await database.embedded?.stop();
    await forgetDatabase();
    throw error;
  });
  const devToken =
    env.SCIM_TOKEN || !devDefaults ? undefined : await ensureDevScimToken(service.db, embeddedDataDir(env));
  printBanner({
    url: service.url,
    listening: listeningOn(listenHost, service.url),
    // What the IdP and admins are given; the listen address can be a container's or loopback.
    publicUrl: env.PUBLIC_URL?.replace(/\/$/, "") ?? service.url,
    idpToken:
      devToken ??
      (env.SCIM_TOKEN ? "(SCIM_TOKEN from the environment)" : "(the tokens made with `scim-connector token create`)"),
    adminToken: env.ADMIN_TOKEN
      ? "(ADMIN_TOKEN from the environment)"
      : (adminToken ??
        (adminAuthMode(env) === "saml"
          ? "(none: ADMIN_TOKEN is unset, so the admin JSON API is off; the UI signs in with SAML)"
          : "(none)")),
    platform: emulator
      ? `${emulator.running.url} (the embedded emulator; set PLATFORM_URL for a real platform)`
      : env.PLATFORM_URL!,
  });

  stopGracefullyOnSignals({
    delayMs: env.SHUTDOWN_DELAY_MS,
    timeoutMs: env.SHUTDOWN_TIMEOUT_MS,
    drain: () => service.drain(),
    close: async (graceMs) => {
      await service.close({ graceMs });
      await emulator?.running.close();
      await database.embedded?.stop();
      await forgetDatabase();
    },
  });
}

async function startEmbeddedEmulator(env: Env) {
  const options = emulatorOptionsFromEnv(env);
  const running = await startEmulator({ ...options, permissions: env.EMULATOR_PERMISSIONS, port: env.EMULATOR_PORT });
  const apiKey = Object.entries(options.apiKeys ?? {}).find(([, permissions]) => permissions === "*")?.[0];
  const target: PlatformTarget = {
    url: running.url,
    scimToken: env.EMULATOR_SCIM_TOKEN,
    apiKey,
    requestOrigin: options.requestOrigins?.[0] ?? "scim-connector",
  };
  return { running, target };
}

/**
 * The address the server is bound to, said as it is: service.url names 127.0.0.1 for 0.0.0.0 (a
 * URL to call from this machine), which read as "loopback only" when every interface listens.
 */
function listeningOn(listenHost: string, url: string): string {
  const port = new URL(url).port;
  const address = `${listenHost.includes(":") ? `[${listenHost}]` : listenHost}:${port}`;
  if (isLoopbackHost(listenHost)) {
    return `${address} (loopback only: Okta or Entra reach it through a tunnel or proxy on this machine; README, "The first hour")`;
  }
  return listenHost === "0.0.0.0" || listenHost === "::" ? `${address} (every interface)` : address;
}

function printBanner(b: {
  url: string;
  listening: string;
  publicUrl: string;
  idpToken: string;
  adminToken: string;
  platform: string;
}): void {
  console.log(`
scim-connector is running.

  SCIM base URL   ${b.publicUrl}/scim/v2
  IdP token       ${b.idpToken}
  Admin UI        ${b.publicUrl}/admin
  Admin token     ${b.adminToken}
  Platform        ${b.platform}
  Listening on    ${b.listening}
  Health          ${b.url}/healthz   ${b.url}/readyz
`);
}
