import type { Queryable } from "../database.js";

/**
 * Which platform the database reconciles with (one row), and the per-platform state that stops
 * being true when the platform changes: the accounts made there, the actions held for them, the
 * verifications queued against them and the quarantined endpoint families.
 */

export type PlatformBinding = { platform: string; boundAt: Date };

/** The binding in force; `forUpdate` locks its row for the caller's transaction (rebindPlatform takes the same lock). */
export async function getPlatformBinding(
  db: Queryable,
  options: { forUpdate?: boolean } = {},
): Promise<PlatformBinding | undefined> {
  const rows: { platform: string; bound_at: Date }[] = await db.query(
    `SELECT platform, bound_at FROM platform_binding WHERE id = 1${options.forUpdate ? " FOR UPDATE" : ""}`,
  );
  return rows[0] && { platform: rows[0].platform, boundAt: rows[0].bound_at };
}

/** Records `platform` when the database is bound to none yet; returns the binding in force either way. */
export async function bindPlatformIfUnbound(db: Queryable, platform: string, now: Date): Promise<PlatformBinding> {
  await db.query(
    `INSERT INTO platform_binding (id, platform, bound_at) VALUES (1, $1, $2) ON CONFLICT (id) DO NOTHING`,
    [platform, now],
  );
  return (await getPlatformBinding(db))!;
}

export type PlatformStateCounts = {
  /** Accounts with a platform id (created or adopted there). */
  accounts: number;
  /** Creates sent whose answer was never recorded. */
  creating: number;
  heldActions: number;
  queuedVerifications: number;
  quarantinedFamilies: number;
};

export async function countPlatformState(db: Queryable): Promise<PlatformStateCounts> {
  const rows: PlatformStateCounts[] = await db.query(
    `SELECT (SELECT count(*)::int FROM platform_accounts WHERE platform_id IS NOT NULL) AS "accounts",
            (SELECT count(*)::int FROM platform_accounts WHERE platform_id IS NULL) AS "creating",
            (SELECT count(*)::int FROM reconcile_holds WHERE decision IS NULL) AS "heldActions",
            (SELECT count(*)::int FROM reconcile_queue WHERE verify_run IS NOT NULL) AS "queuedVerifications",
            (SELECT count(*)::int FROM platform_quarantine) AS "quarantinedFamilies"`,
  );
  return rows[0]!;
}

/**
 * Deletes what the database knows of the old platform (accounts, quarantines, the identifiers and
 * permission model learned from its answers) and binds it to `platform`, in the caller's
 * transaction; the reconcile queue's and holds' part is the caller's (forgetPlatform). The binding
 * row is locked first, so two operators running this at once take turns.
 */
export async function rebindPlatform(tx: Queryable, platform: string, now: Date): Promise<void> {
  await tx.query(`SELECT 1 FROM platform_binding WHERE id = 1 FOR UPDATE`);
  await tx.query(`DELETE FROM platform_accounts`);
  await tx.query(`DELETE FROM platform_quarantine`);
  await tx.query(`DELETE FROM platform_identifiers`);
  await tx.query(`DELETE FROM platform_permission_model`);
  await tx.query(
    `INSERT INTO platform_binding (id, platform, bound_at) VALUES (1, $1, $2)
     ON CONFLICT (id) DO UPDATE SET platform = EXCLUDED.platform, bound_at = EXCLUDED.bound_at`,
    [platform, now],
  );
}
