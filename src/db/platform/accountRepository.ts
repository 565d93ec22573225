import type { Queryable } from "../database.js";
import type { DesiredDashboardUser } from "../../mapping/types.js";
import type { AccountState } from "../../reconcile/planner.js";

/** What the connector knows of each user's dashboard account on the platform. */
export type PlatformAccount = AccountState & {
  userId: string;
  appliedAt: Date | null;
  lastVerifiedAt: Date | null;
  createdByConnector: boolean;
};

type Row = {
  user_id: string;
  user_name: string;
  platform_id: string | null;
  state: "creating" | "active";
  last_applied: DesiredDashboardUser | null;
  applied_at: Date | null;
  last_verified_at: Date | null;
  created_by_connector: boolean;
  stripped_at: Date | null;
  delete_after: Date | null;
};

const mapAccount = (r: Row): PlatformAccount => ({
  userId: r.user_id,
  userName: r.user_name,
  platformId: r.platform_id,
  state: r.state,
  lastApplied: r.last_applied,
  appliedAt: r.applied_at,
  lastVerifiedAt: r.last_verified_at,
  createdByConnector: r.created_by_connector,
  strippedAt: r.stripped_at,
  deleteAfter: r.delete_after,
});

export async function getAccount(db: Queryable, userId: string): Promise<PlatformAccount | undefined> {
  const rows: Row[] = await db.query(`SELECT * FROM platform_accounts WHERE user_id = $1`, [userId]);
  return rows[0] ? mapAccount(rows[0]) : undefined;
}

export async function getAccounts(db: Queryable, userIds: readonly string[]): Promise<Map<string, PlatformAccount>> {
  const rows: Row[] = await db.query(`SELECT * FROM platform_accounts WHERE user_id = ANY($1::uuid[])`, [userIds]);
  return new Map(rows.map((r) => [r.user_id, mapAccount(r)]));
}

/** Records that a POST is about to be sent: until its answer is recorded, the account is 'creating'. */
export async function markCreating(db: Queryable, userId: string, userName: string, now: Date): Promise<void> {
  await db.query(
    `INSERT INTO platform_accounts (user_id, user_name, platform_id, state, updated_at) VALUES ($1, $2, NULL, 'creating', $3)
     ON CONFLICT (user_id) DO UPDATE SET user_name = EXCLUDED.user_name, platform_id = NULL, state = 'creating', updated_at = $3`,
    [userId, userName, now],
  );
}

/**
 * The platform holds `applied` under `platformId` for this user (after a create, adopt or update).
 * With `stripped`, `applied` is the account with no permissions, kept until `deleteAfter` (null:
 * kept); any other write ends the stripped state.
 */
export async function recordApplied(
  db: Queryable,
  userId: string,
  platformId: string,
  applied: DesiredDashboardUser,
  now: Date,
  options: { createdByConnector?: boolean; verified?: boolean; stripped?: { deleteAfter: Date | null } } = {},
): Promise<void> {
  await db.query(
    `INSERT INTO platform_accounts (user_id, user_name, platform_id, state, last_applied, applied_at, created_by_connector, last_verified_at, updated_at, stripped_at, delete_after)
     VALUES ($1, $2, $3, 'active', $4, $5, $6, CASE WHEN $7 THEN $5::timestamptz END, $5, CASE WHEN $8 THEN $5::timestamptz END, $9)
     ON CONFLICT (user_id) DO UPDATE SET user_name = EXCLUDED.user_name, platform_id = EXCLUDED.platform_id, state = 'active',
       last_applied = EXCLUDED.last_applied, applied_at = EXCLUDED.applied_at,
       created_by_connector = platform_accounts.created_by_connector OR EXCLUDED.created_by_connector,
       last_verified_at = COALESCE(EXCLUDED.last_verified_at, platform_accounts.last_verified_at), updated_at = EXCLUDED.updated_at,
       stripped_at = CASE WHEN $8 THEN COALESCE(platform_accounts.stripped_at, EXCLUDED.stripped_at) END,
       delete_after = EXCLUDED.delete_after`,
    [
      userId,
      applied.userName,
      platformId,
      JSON.stringify(applied),
      now,
      options.createdByConnector ?? true,
      options.verified ?? false,
      options.stripped !== undefined,
      options.stripped?.deleteAfter ?? null,
    ],
  );
}

export async function removeAccount(db: Queryable, userId: string): Promise<void> {
  await db.query(`DELETE FROM platform_accounts WHERE user_id = $1`, [userId]);
}

export async function countAccounts(db: Queryable): Promise<number> {
  const rows: { n: number }[] = await db.query(
    `SELECT count(*)::int AS n FROM platform_accounts WHERE platform_id IS NOT NULL`,
  );
  return rows[0]?.n ?? 0;
}

/** Accounts stripped since `since` that are to be deleted after the grace (the breaker's wave of strips). */
export async function countStripsToDeleteSince(db: Queryable, since: Date): Promise<number> {
  const rows: { n: number }[] = await db.query(
    `SELECT count(*)::int AS n FROM platform_accounts WHERE stripped_at >= $1 AND delete_after IS NOT NULL`,
    [since],
  );
  return rows[0]?.n ?? 0;
}

export async function markVerified(db: Queryable, userId: string, now: Date): Promise<void> {
  await db.query(`UPDATE platform_accounts SET last_verified_at = $2 WHERE user_id = $1`, [userId, now]);
}
