import { RateLimiterMemory, RateLimiterPostgres } from "rate-limiter-flexible";
import type { Database } from "../database.js";

/**
 * Counters for the failed-authentication throttles, kept in PostgreSQL (table auth_throttle, made
 * by migration AuthThrottle1763700000750) so that every replica counts the same failures. The
 * limiter runs its few statements on the database's pool.
 */

export type CounterSpec = { keyPrefix: string; points: number; durationSeconds: number };

export function sharedRateLimiter(db: Database, spec: CounterSpec): RateLimiterPostgres {
  return new RateLimiterPostgres({
    storeClient: db.pgClient(),
    storeType: "pool",
    tableName: "auth_throttle",
    tableCreated: true, // the migration made it; never CREATE TABLE at run time
    keyPrefix: spec.keyPrefix,
    points: spec.points,
    duration: spec.durationSeconds,
    // Once a key is over its limit, this process answers from memory until the window ends: a
    // flood of failures then costs no database write per request.
    inMemoryBlockOnConsumed: spec.points + 1,
    // PostgreSQL down: count in this process alone rather than fail every sign-in.
    insuranceLimiter: new RateLimiterMemory({
      keyPrefix: spec.keyPrefix,
      points: spec.points,
      duration: spec.durationSeconds,
    }),
  });
}
