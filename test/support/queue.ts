import { setTimeout as delay } from "node:timers/promises";
import type { Sql } from "./emulator.js";

/**
 * The one queue-drain wait. By default it waits until the reconcile queue has nothing left to do
 * soon: rows retrying after a failure (seconds to minutes) are waited for; rows deferred for budget
 * until a later day (more than 2 minutes out), and parked rows, are not.
 * - `deferred: "wait"`: every row that is not parked, deferred ones too;
 * - `mirror: true`: the mirror's pending changes (not parked) must be gone as well.
 *
 * It polls the database itself (no vitest import) because bench/soak.ts waits with it too.
 */
export type QueueWait = { deferred?: "skip" | "wait"; mirror?: boolean; timeoutMs?: number };

export async function waitForQueueIdle(
  target: Sql | { database: { db: Sql } },
  options: QueueWait = {},
): Promise<void> {
  const db = "database" in target ? target.database.db : target;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [row] = await db.query(
      `SELECT (SELECT count(*) FROM reconcile_queue
                WHERE parked_at IS NULL AND ($1::boolean OR not_before <= now() + interval '2 minutes' OR priority IS NULL))::int AS queue,
              (CASE WHEN $2::boolean THEN (SELECT count(*) FROM mirror_sync.pending WHERE parked_at IS NULL) ELSE 0 END)::int AS mirror`,
      [options.deferred === "wait", options.mirror ?? false],
    );
    if (row.queue === 0 && row.mirror === 0) return;
    if (Date.now() > deadline) {
      const rows = await db.query(
        `SELECT q.user_id, u.user_name, q.priority, q.action, q.attempts, q.not_before, q.claimed_by, q.claimed_at, q.last_error,
                q.claimed_by IN (SELECT objid::int FROM pg_locks WHERE locktype = 'advisory' AND classid = 4242 AND objsubid = 2 AND granted) AS lease_live
           FROM reconcile_queue q LEFT JOIN idp_users u ON u.id = q.user_id WHERE q.parked_at IS NULL LIMIT 5`,
      );
      throw new Error(
        `not idle after ${timeoutMs} ms: ${row.queue} reconcile rows, ${row.mirror} mirror changes; ${JSON.stringify(rows)}`,
      );
    }
    await delay(100);
  }
}

/**
 * The generation of a user's queue row (the user by userName): every mark raises it, also one that
 * keeps the row's trigger (an IdP write outranks a mapping mark), so a test reads a mark by it.
 */
export async function queueGeneration(db: Sql, userName: string): Promise<number> {
  const rows: { generation: string }[] = await db.query(
    `SELECT q.generation FROM reconcile_queue q JOIN idp_users u ON u.id = q.user_id WHERE u.user_name = $1`,
    [userName],
  );
  if (!rows[0]) throw new Error(`${userName} is not queued`);
  return Number(rows[0].generation);
}
