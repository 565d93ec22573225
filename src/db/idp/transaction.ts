import type { Database, Queryable } from "../database.js";
import { sqlState } from "../../errors.js";

const RETRYABLE = new Set(["40P01", "40001"]);
const ATTEMPTS = 3;

/**
 * Runs `work` in a transaction, retrying a few times when PostgreSQL aborts it as a deadlock
 * victim or a serialisation failure: those are about timing, not about the request, and the IdP
 * should not see them.
 */
export async function inIdpTransaction<T>(db: Database, work: (manager: Queryable) => Promise<T>): Promise<T> {
  return withIdpRetry(() => db.transaction(work));
}

/** The same retries for a write that is one statement (atomic without a transaction). */
export async function withIdpRetry<T>(write: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      const state = sqlState(error);
      if (!state || !RETRYABLE.has(state) || attempt >= ATTEMPTS) throw error;
    }
  }
}
