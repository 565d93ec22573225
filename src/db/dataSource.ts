import { readdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { DataSource, type MigrationInterface } from "typeorm";

/**
 * The TypeORM data source. TypeORM stays inside src/db: the rest of the code calls repository
 * functions with domain names. Repositories run parameterised SQL through `db.query` (or a
 * transaction's manager), which keeps the hot SCIM paths close to the wire.
 */

const here = path.dirname(fileURLToPath(import.meta.url));
/** `migrations/` at the project root, or `dist/migrations/` in a build. */
export const migrationsDir = path.resolve(here, "../../migrations");

type MigrationClass = new () => MigrationInterface;

/** Loads every migration class in migrations/, in file-name (timestamp) order. */
export async function loadMigrations(dir = migrationsDir): Promise<MigrationClass[]> {
  const files = (await readdir(dir))
    .filter((f) => /^\d{13}-[\w-]+\.(ts|js)$/.test(f) && !f.endsWith(".d.ts"))
    .sort();
  const classes: MigrationClass[] = [];
  for (const file of files) {
    const mod = (await import(pathToFileURL(path.join(dir, file)).href)) as Record<string, unknown>;
    for (const value of Object.values(mod)) {
      if (typeof value === "function" && typeof value.prototype?.up === "function") classes.push(value as MigrationClass);
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

export async function createDataSource(options: DatabaseOptions): Promise<DataSource> {
  const dataSource = new DataSource({
    type: "postgres",
    url: options.url,
    migrations: await loadMigrations(),
    migrationsTableName: "typeorm_migrations",
    migrationsTransactionMode: "each",
    logging: false,
    extra: {
      max: options.poolSize ?? 10,
      application_name: options.applicationName,
      connectionTimeoutMillis: 5_000,
      // A dropped server connection surfaces as an error on the next query, not a crash.
      keepAlive: true,
    },
  });
  await dataSource.initialize();
  // pg emits 'error' on idle clients when the server restarts; without a listener the process dies.
  const pool = (dataSource.driver as unknown as { master?: { on(event: string, fn: (e: Error) => void): void } }).master;
  pool?.on("error", () => undefined);
  return dataSource;
}

export async function runMigrations(dataSource: DataSource): Promise<string[]> {
  const applied = await dataSource.runMigrations({ transaction: "each" });
  return applied.map((m) => m.name);
}

/** True when every known migration has been applied (the readiness check). */
export async function isMigrated(dataSource: DataSource): Promise<boolean> {
  return !(await dataSource.showMigrations());
}
