import type { Database } from "../db/database.js";
import { ConfigError, type Env } from "../config/env.js";
import { CONNECTION_NAMES, openDatabase } from "../db/dataSource.js";
import { log } from "../logging/logger.js";
import type { PlatformTarget } from "../platform/target.js";

/**
 * The service's database pools: one per role, each under its own application_name
 * (docs/operations.md). The HTTP pool (SCIM, admin, metrics, quarantine, notifications) is
 * DATABASE_POOL_SIZE and is opened, migrated and checked first; the workers open theirs as they start.
 */
export type Pools = {
  /** The HTTP pool, migrated. */
  db: Database;
  open(applicationName: string, poolSize: number): Promise<Database>;
  /** Closes every pool opened, in the order they were opened. */
  close(): Promise<void>;
};

export async function openPools(options: {
  env: Env;
  databaseUrl: string;
  beforeListening?: (db: Database) => Promise<void>;
}): Promise<Pools> {
  const { env } = options;
  const opened: Database[] = [];
  const open = async (applicationName: string, poolSize: number) => {
    const pool = await openDatabase({ url: options.databaseUrl, poolSize, applicationName });
    opened.push(pool);
    return pool;
  };
  const db = await open(CONNECTION_NAMES.http, env.DATABASE_POOL_SIZE);
  try {
    await bringSchemaUpToDate(db, env);
    await options.beforeListening?.(db);
  } catch (error) {
    await db.close();
    throw error;
  }
  return {
    db,
    open,
    async close() {
      for (const pool of opened) await pool.close();
    },
  };
}

/**
 * Migrates (MIGRATE_AT_BOOT, the default), or with a separate migration step in charge (the
 * Kubernetes base's init container, a pipeline's step) checks that the schema is at least what
 * this version needs and stops the boot with what to run when it is not.
 */
async function bringSchemaUpToDate(db: Database, env: Env): Promise<void> {
  if (env.MIGRATE_AT_BOOT) {
    const applied = await db.migrate(() => log.info("db", "another process is migrating the database; waiting for it"));
    if (applied.length) log.info("db", "migrations applied", { migrations: applied });
    return;
  }
  const pending = await db.pendingMigrations();
  if (pending.length)
    throw new ConfigError([
      `MIGRATE_AT_BOOT=false and the database schema is older than this version needs (pending: ${pending.join(", ")}): ` +
        "run `scim-connector migrate` with this version (the migration step: in the Kubernetes base, the pod's `migrate` init container) and start again, or set MIGRATE_AT_BOOT=true.",
    ]);
}

/** PLATFORM_URL with its credentials, or undefined when no platform is configured. */
export function platformFromEnv(env: Env): PlatformTarget | undefined {
  if (!env.PLATFORM_URL) return undefined;
  const missing = (["PLATFORM_SCIM_TOKEN", "PLATFORM_REQUEST_ORIGIN"] as const).filter((name) => !env[name]);
  if (missing.length) throw new ConfigError(missing.map((name) => `${name}: required when PLATFORM_URL is set`));
  return {
    url: env.PLATFORM_URL,
    scimToken: env.PLATFORM_SCIM_TOKEN!,
    apiKey: env.PLATFORM_API_KEY,
    requestOrigin: env.PLATFORM_REQUEST_ORIGIN!,
  };
}
