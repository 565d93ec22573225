import { createHash } from "node:crypto";
import type { Queryable } from "./idpUserRepository.js";

/**
 * The hot SCIM read path (Okta and Entra look users up by userName before every write) runs its
 * queries as named prepared statements straight on the pg pool under the DataSource: PostgreSQL
 * parses and plans each distinct SQL text once per connection instead of once per request.
 * Inside a transaction (an EntityManager) queries go through TypeORM as usual.
 */

type PgPool = { query(config: { name?: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }> };

const MAX_PREPARED = 256;
const MAX_TEXT = 4000;
const prepared = new Set<string>();

function poolOf(q: Queryable): PgPool | undefined {
  const driver = (q as { driver?: { master?: unknown } }).driver;
  const pool = driver?.master as PgPool | undefined;
  return pool && typeof pool.query === "function" ? pool : undefined;
}

/** Rows of a read-only query; prepared by name when `q` is the DataSource and the text is one of a bounded set. */
export async function readQuery<T>(q: Queryable, text: string, values: unknown[]): Promise<T[]> {
  const pool = poolOf(q);
  if (!pool) return (await q.query(text, values)) as T[];
  const name = `idp_${createHash("sha1").update(text).digest("base64url").slice(0, 20)}`;
  // Filters can produce many distinct texts; preparing only a bounded set keeps connection memory flat.
  if (!prepared.has(name)) {
    if (prepared.size >= MAX_PREPARED || text.length > MAX_TEXT) return (await pool.query({ text, values })).rows as T[];
    prepared.add(name);
  }
  return (await pool.query({ name, text, values })).rows as T[];
}
