import type { Env } from "../config/env.js";
import { CONNECTION_NAMES, openDatabase } from "../db/dataSource.js";
import { resolveDatabase } from "./boot.js";

/**
 * Runs a command against the database. Only `start` and `migrate` change the schema: every other
 * command needs it current, and stops with the fix instead of migrating a database under a
 * running service of another version. `fresh` migrates a database nothing has migrated yet
 * (no service of any version can run on it), so a first `token create` works as documented.
 */
export async function withDatabase(
  env: Env,
  schema: { migrates: boolean | "fresh" },
  fn: (db: Awaited<ReturnType<typeof openDatabase>>) => Promise<void>,
): Promise<void> {
  const database = await resolveDatabase(env, { useRunning: true });
  const db = await openDatabase({ url: database.url, poolSize: 2, applicationName: CONNECTION_NAMES.cli });
  try {
    if (schema.migrates === "fresh" && (await db.isFresh())) await db.migrate();
    if (schema.migrates !== true && !(await db.isMigrated())) {
      throw new Error(
        "The database schema is not migrated (or is older than this version): run `scim-connector migrate`, or start the service, then try again.",
      );
    }
    await fn(db);
  } finally {
    await db.close();
    await database.embedded?.stop();
  }
}
