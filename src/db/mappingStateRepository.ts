import type { Database } from "./database.js";

/** The mapping last put in force (its hash and YAML text), shared by all replicas. */
export async function swapMappingState(
  db: Database,
  hash: string,
  sourceText: string,
): Promise<{ changed: boolean; previousText: string | undefined }> {
  return db.transaction(async (tx) => {
    const rows: { hash: string; source_text: string }[] = await tx.query(
      `SELECT hash, source_text FROM mapping_state WHERE id = 1 FOR UPDATE`,
    );
    const previous = rows[0];
    if (previous?.hash === hash) return { changed: false, previousText: undefined };
    await tx.query(
      `INSERT INTO mapping_state (id, hash, source_text, applied_at) VALUES (1, $1, $2, now())
       ON CONFLICT (id) DO UPDATE SET hash = EXCLUDED.hash, source_text = EXCLUDED.source_text, applied_at = now()`,
      [hash, sourceText],
    );
    return { changed: true, previousText: previous?.source_text };
  });
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

/** The mapping recorded in force (hash and YAML text), or undefined before any was. */
export async function mappingInForce(db: Database): Promise<{ hash: string; sourceText: string } | undefined> {
  const rows: { hash: string; sourceText: string }[] = await db.query(
    `SELECT hash, source_text AS "sourceText" FROM mapping_state WHERE id = 1`,
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
