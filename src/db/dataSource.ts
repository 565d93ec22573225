import { readdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import pg from "pg";
import { DataSource, type MigrationInterface } from "typeorm";
import { log, withoutLogContext } from "../logging/logger.js";
import { DatabaseUnreachable } from "./connectFailure.js";
import { Database } from "./database.js";
import { pgTypes } from "./timestamps.js";

/**
 * Opens the TypeORM data source (pool and migrations) behind a `Database`. Repositories run
 * parameterised SQL through `Database.query` / `execute` or a transaction's `Queryable`.
 */

const here = path.dirname(fileURLToPath(import.meta.url));
/** `migrations/` at the project root, or `dist/migrations/` in a build. */
const migrationsDir = path.resolve(here, "../../migrations");

type MigrationClass = new () => MigrationInterface;

/** Loads every migration class in migrations/, in file-name (timestamp) order. */
async function loadMigrations(dir = migrationsDir): Promise<MigrationClass[]> {
  const files = (await readdir(dir)).filter((f) => /^\d{13}-[\w-]+\.(ts|js)$/.test(f) && !f.endsWith(".d.ts")).sort();
  const classes: MigrationClass[] = [];
  for (const file of files) {
    const mod = (await import(pathToFileURL(path.join(dir, file)).href)) as Record<string, unknown>;
    for (const value of Object.values(mod)) {
      if (typeof value === "function" && typeof value.prototype?.up === "function")
        classes.push(value as MigrationClass);
    }
  }
  return classes;
}

/**
 * The `application_name` of each of the service's connection pools (and of the reconcile lease), so
 * `pg_stat_activity` tells the roles apart (docs/operations.md). Tools and tests name their own.
 */
export const CONNECTION_NAMES = {
  http: "scim-connector:http",
  reconcileWorker: "scim-connector:reconcile-worker",
  reconcileLease: "scim-connector:reconcile-lease",
  mirrorWorker: "scim-connector:mirror-worker",
  scheduler: "scim-connector:scheduler",
  cli: "scim-connector:cli",
} as const;

export type DatabaseOptions = { url: string; poolSize?: number; applicationName: string };

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const { applicationName } = options;
  // TypeORM makes the pool with the pg module it is given (its public `driver` option): a Pool that
  // remembers itself lets the hot reads run on it without a query runner (Database.prepared).
  let pool: pg.Pool | undefined;
  class RememberedPool extends pg.Pool {
    constructor(config?: pg.PoolConfig) {
      super(config);
      pool = this;
      this.on("connect", (client) => client.on("error", (error) => connectionLostUnheard(client, error)));
    }
  }
  // A listener for each client's whole life. pg-pool's own is off while a client is checked out,
  // and a holder's comes late in one case: a raw statement's client, released as its answer is
  // parsed, is handed at once to a waiting query runner, which listens only a microtask later;
  // a server goodbye in the same read was an 'error' no one heard, which ends the process
  // (test/faults/connection-loss.test.ts). The client is then not queryable: the holder's next
  // statement fails and the pool discards it on release.
  const connectionLostUnheard = (client: pg.PoolClient, error: Error) => {
    if (client.listenerCount("error") > 1) return; // the pool's or the holder's listener has it
    withoutLogContext(() => log.warn("db", "checked-out pool connection lost", { applicationName, error }));
  };
  const dataSource = new DataSource({
    type: "postgres",
    driver: { ...pg, Pool: RememberedPool },
    url: options.url,
    migrations: await loadMigrations(),
    migrationsTableName: "typeorm_migrations",
    migrationsTransactionMode: "each",
    logging: false,
    // pg emits 'error' on an idle pooled connection the server dropped (a restart, a terminated
    // backend); the pool discards that connection and the next query opens another. The event comes
    // in the async context of whichever request opened the connection: not that request's line.
    poolErrorHandler: (error: unknown) =>
      withoutLogContext(() => log.warn("db", "idle pool connection lost", { applicationName, error })),
    extra: {
      max: options.poolSize ?? 10,
      application_name: applicationName,
      connectionTimeoutMillis: 5_000,
      // TCP keepalive notices a silently dropped server sooner.
      keepAlive: true,
      // pg's type parsers, with a faster one for timestamptz in UTC (the same Dates).
      types: pgTypes,
    },
  });
  await dataSource.initialize().catch((error: unknown) => {
    throw new DatabaseUnreachable(options.url, error);
  });
  if (!pool) throw new Error("TypeORM did not make its pool with the pg module it was given");
  return new Database(dataSource, applicationName, pool);
}
