import type { Queryable } from "./database.js";

/**
 * Deletes and scrubs by age what nothing else prunes (docs/operations.md, "Data retention"). Each
 * statement is bounded by its cutoff; what the audit needs stays (the reconciliation log, pruned by
 * its own setting, and the identifiers of deactivated users).
 */

/**
 * Clears the personal data of IdP users inactive and unchanged since before `cutoff`: names,
 * department and the stored resource beyond its schemas, userName, externalId and active. The
 * row, its id, userName and group memberships stay, so the IdP's later requests still find the
 * user, the log and the access report still name them, and a reactivation writes the profile back.
 */
export async function scrubDeactivatedUsers(db: Queryable, cutoff: Date): Promise<number> {
  return db.execute(
    `UPDATE idp_users
        SET display_name = NULL, given_name = NULL, family_name = NULL, department = NULL,
            resource = jsonb_strip_nulls(jsonb_build_object(
              'schemas', resource->'schemas', 'userName', user_name, 'externalId', external_id, 'active', false)),
            version = version + 1
      WHERE NOT active AND updated_at < $1
        AND (display_name IS NOT NULL OR given_name IS NOT NULL OR family_name IS NOT NULL OR department IS NOT NULL
             OR resource - ARRAY['schemas', 'userName', 'externalId', 'active'] <> '{}'::jsonb)`,
    [cutoff],
  );
}

/** Budget ledger rows older than `cutoff` (the budget reads only its current window). */
export async function deleteDebitsBefore(db: Queryable, cutoff: Date): Promise<number> {
  return db.execute(`DELETE FROM budget_debits WHERE spent_at < $1`, [cutoff]);
}

/**
 * Finished resync runs older than `cutoff`, and schedule slots older than it except the latest
 * (which says when the cron last fired). A running run is never removed.
 */
export async function deleteRunsBefore(db: Queryable, cutoff: Date): Promise<number> {
  await db.execute(`DELETE FROM resync_schedule WHERE slot < $1 AND slot < (SELECT max(slot) FROM resync_schedule)`, [
    cutoff,
  ]);
  return db.execute(`DELETE FROM resync_runs WHERE status <> 'running' AND finished_at < $1`, [cutoff]);
}
