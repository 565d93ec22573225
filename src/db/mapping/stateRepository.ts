import type { Database, Queryable } from "../database.js";

// The table `mapping_state` (one row: the mapping every replica plans with). MappingStore writes it
// (putInForce); DesiredAccess (src/mapping/desiredAccess.ts) is the one reader.

/**
 * Records `hash` as the mapping in force, shared by all replicas. `changed`: it was not before;
 * `unmarked`: the users its change affects are still to be marked (it was just swapped in, or the
 * replica that swapped it stopped before recordMappingMarked); `previousText`: the mapping it
 * replaced, undefined when there was none (or it is not known): then every user is to be marked.
 */
export async function swapMappingState(
  db: Database,
  hash: string,
  sourceText: string,
): Promise<{ changed: boolean; unmarked: boolean; previousText: string | undefined }> {
  return db.transaction(async (tx) => {
    const rows: {
      hash: string;
      source_text: string;
      previous_source_text: string | null;
      marked_hash: string | null;
    }[] = await tx.query(
      `SELECT hash, source_text, previous_source_text, marked_hash FROM mapping_state WHERE id = 1 FOR UPDATE`,
    );
    const previous = rows[0];
    if (previous?.hash === hash) {
      // In force already; its marks may not all be written (a replica stopped after the swap).
      const unmarked = previous.marked_hash !== hash;
      return {
        changed: false,
        unmarked,
        previousText: unmarked ? (previous.previous_source_text ?? undefined) : undefined,
      };
    }
    await tx.query(
      `INSERT INTO mapping_state (id, hash, source_text, previous_source_text, marked_hash, applied_at)
       VALUES (1, $1, $2, $3, NULL, now())
       ON CONFLICT (id) DO UPDATE SET hash = EXCLUDED.hash, source_text = EXCLUDED.source_text,
         previous_source_text = EXCLUDED.previous_source_text, marked_hash = NULL, applied_at = now()`,
      [hash, sourceText, previous?.source_text ?? null],
    );
    return { changed: true, unmarked: true, previousText: previous?.source_text };
  });
}

/** Records that every user a mapping's change affects is marked (while that mapping is still the one in force). */
export async function recordMappingMarked(db: Database, hash: string): Promise<void> {
  await db.query(`UPDATE mapping_state SET marked_hash = $1 WHERE id = 1 AND hash = $1`, [hash]);
}

/** The hash of the mapping recorded in force, or undefined before any was. */
export async function mappingHashInForce(db: Database): Promise<string | undefined> {
  const rows: { hash: string }[] = await db.prepared(
    "mapping_hash_in_force",
    `SELECT hash FROM mapping_state WHERE id = 1`,
    [],
  );
  return rows[0]?.hash;
}

/** The mapping recorded in force: its hash, YAML text and when it was put in force. */
export type MappingRecord = { hash: string; sourceText: string; appliedAt: Date };

/** The mapping recorded in force, or undefined before any was. */
export async function mappingInForce(db: Queryable): Promise<MappingRecord | undefined> {
  const rows: MappingRecord[] = await db.query(
    `SELECT hash, source_text AS "sourceText", applied_at AS "appliedAt" FROM mapping_state WHERE id = 1`,
  );
  return rows[0];
}

/** Every IdP group, as the mapping sees it. */
export async function listGroupRefs(
  db: Database,
): Promise<{ id: string; displayName: string; externalId: string | null }[]> {
  return db.query(`SELECT id, display_name AS "displayName", external_id AS "externalId" FROM idp_groups ORDER BY id`);
}

/** Members of these groups, plus every user who has (or is getting) a platform account. */
export async function listUsersToRederive(db: Database, groupIds: string[]): Promise<string[]> {
  const rows: { id: string }[] = await db.query(
    `SELECT DISTINCT user_id AS id FROM idp_group_members WHERE group_id = ANY($1::uuid[])
     UNION SELECT user_id FROM platform_accounts`,
    [groupIds],
  );
  return rows.map((r) => r.id);
}
