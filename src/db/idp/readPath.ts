import { createHash } from "node:crypto";
import { Database, type Queryable } from "../database.js";

/**
 * The hot SCIM read path (Okta and Entra look users up by userName before every write) runs its
 * queries as named prepared statements (`Database.prepared`): PostgreSQL parses and plans each
 * distinct SQL text once per connection instead of once per request. Inside a transaction the
 * queries run on the transaction's connection as usual.
 */

const MAX_PREPARED = 256;
const MAX_TEXT = 4000;
/** Statement name by SQL text, for the texts that are prepared (named once, not hashed per request). */
const prepared = new Map<string, string>();

/** Rows of a read-only query; prepared by name when `q` is the Database and the text is one of a bounded set. */
export function readQuery<T>(q: Queryable, text: string, values: unknown[]): Promise<T[]> {
  if (!(q instanceof Database)) return q.query<T>(text, values);
  let name = prepared.get(text);
  if (name === undefined) {
    // Filters can produce many distinct texts; preparing only a bounded set keeps connection memory flat.
    if (prepared.size >= MAX_PREPARED || text.length > MAX_TEXT) return q.query<T>(text, values);
    name = `idp_${createHash("sha1").update(text).digest("base64url").slice(0, 20)}`;
    prepared.set(text, name);
  }
  return q.prepared<T>(name, text, values);
}
