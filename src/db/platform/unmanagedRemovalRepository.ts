import type { Queryable } from "../database.js";
import {
  mapUnmanagedRow,
  type UnmanagedAccount,
  type UnmanagedPermissions,
  type UnmanagedRemoval,
  type UnmanagedRow,
} from "./unmanagedAccountRepository.js";

/**
 * An account made by hand that a campaign's reviewer revoked (migrations/1763700002600-unmanaged-revocation.ts):
 * the decision (strip or delete), then what the reconciler did (src/reconcile/unmanagedRemoval.ts).
 * The account is known by its `account_id` wherever an IdP user's id would go (the queue, holds,
 * campaign items, the log).
 */

/** Only an account still confirmed and that no IdP user has is removed: the IdP's own is adopted instead. */
const REMOVABLE = `state = 'confirmed' AND NOT EXISTS (SELECT 1 FROM idp_users i WHERE lower(i.user_name) = u.user_name)`;

/** Records the reviewer's decision; answers the account, or undefined when it is no longer one to remove. */
export async function recordUnmanagedRemoval(
  tx: Queryable,
  accountId: string,
  d: Omit<UnmanagedRemoval, "doneAt">,
): Promise<UnmanagedAccount | undefined> {
  const rows = await tx.query<UnmanagedRow>(
    `UPDATE unmanaged_accounts u SET removal = $2, removal_by = $3, removal_at = $4, removal_campaign_id = $5,
            removal_item_id = $6, removal_comment = $7, removed_at = NULL
      WHERE account_id = $1 AND ${REMOVABLE} RETURNING *`,
    [accountId, d.removal, d.by, d.at, d.campaignId, d.itemId, d.comment],
  );
  return rows[0] ? mapUnmanagedRow(rows[0]) : undefined;
}

/** The account of this id when a removal is decided and not yet carried out (the reconciler's plan reads it). */
export async function pendingUnmanagedRemoval(db: Queryable, accountId: string): Promise<UnmanagedAccount | undefined> {
  const rows = await db.query<UnmanagedRow>(
    `SELECT * FROM unmanaged_accounts u
      WHERE account_id = $1 AND removal IS NOT NULL AND removed_at IS NULL AND ${REMOVABLE}`,
    [accountId],
  );
  return rows[0] ? mapUnmanagedRow(rows[0]) : undefined;
}

/** The strip went out: the account holds `permissions` (none) and stays listed, stripped. */
export async function recordUnmanagedStripped(
  db: Queryable,
  accountId: string,
  permissions: UnmanagedPermissions,
  now: Date,
): Promise<void> {
  await db.query(`UPDATE unmanaged_accounts SET permissions = $2, removed_at = $3 WHERE account_id = $1`, [
    accountId,
    JSON.stringify(permissions),
    now,
  ]);
}

/** The DELETE went out (or the account was already gone): it leaves the list. */
export async function recordUnmanagedDeleted(db: Queryable, accountId: string, now: Date): Promise<void> {
  await db.query(`UPDATE unmanaged_accounts SET state = 'removed', removed_at = $2 WHERE account_id = $1`, [
    accountId,
    now,
  ]);
}
