import type { Database, Queryable } from "./database.js";

/** Reads a full resync needs beyond the IdP and account repositories. */

export async function countIdpUsers(db: Queryable): Promise<number> {
  const rows: { n: number }[] = await db.query(`SELECT count(*)::int AS n FROM idp_users`);
  return rows[0]?.n ?? 0;
}

/** Platform accounts whose IdP user no longer exists, in user-id order after `afterUserId`. */
export async function listOrphanAccounts(db: Queryable, afterUserId: string | undefined, limit: number): Promise<{ userId: string; platformId: string | null }[]> {
  return db.query(
    `SELECT a.user_id AS "userId", a.platform_id AS "platformId" FROM platform_accounts a
      WHERE ($1::uuid IS NULL OR a.user_id > $1::uuid) AND NOT EXISTS (SELECT 1 FROM idp_users u WHERE u.id = a.user_id)
      ORDER BY a.user_id LIMIT $2`,
    [afterUserId ?? null, limit],
  );
}
