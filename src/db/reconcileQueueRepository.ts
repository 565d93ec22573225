import type { EntityManager } from "typeorm";

/** What caused a user to be marked dirty; kept on the queue row and copied into the reconciliation log. */
export type DirtyTrigger =
  | { kind: "idp"; requestId?: string; method?: string; resource?: string }
  | { kind: "mapping"; mappingHash?: string }
  | { kind: "resync"; runId: string }
  | { kind: "admin"; actor: string };

const SOURCE_RANK: Record<DirtyTrigger["kind"], number> = { idp: 0, admin: 0, mapping: 1, resync: 2 };

/**
 * Marks users dirty inside the caller's transaction, so the mark commits (or not) with the IdP
 * change that caused it. Coalesced: one row per user; a new mark bumps the generation, clears
 * the classification and any backoff, and keeps the earliest enqueue time. A mark from a more
 * urgent source (IdP over mapping over resync) lowers the row's source rank; never raises it.
 */
export async function markUsersDirty(manager: EntityManager, userIds: readonly string[], trigger: DirtyTrigger): Promise<void> {
  const ids = [...new Set(userIds)];
  if (!ids.length) return;
  await manager.query(
    `INSERT INTO reconcile_queue (user_id, trigger, source_rank)
       SELECT id, $2::jsonb, $3 FROM unnest($1::uuid[]) AS id ORDER BY id
     ON CONFLICT (user_id) DO UPDATE SET
       generation = reconcile_queue.generation + 1,
       priority = NULL,
       trigger = EXCLUDED.trigger,
       source_rank = LEAST(reconcile_queue.source_rank, EXCLUDED.source_rank),
       marked_at = now(),
       not_before = '-infinity',
       attempts = 0,
       last_error = NULL,
       parked_at = NULL`,
    [ids, JSON.stringify(trigger), SOURCE_RANK[trigger.kind]],
  );
}
