import type { Queryable } from "../database.js";
import type { DesiredDashboardUser } from "../../mapping/types.js";
import { roundsByKey } from "../sql.js";

/**
 * Accounts made by hand on the platform (migrations/1763700002300-unmanaged-accounts.ts): recorded
 * from the platform's record by the analysis (src/platformRecord/findings.ts), confirmed or found
 * absent by one lookup each (src/platformRecord/discovery.ts), listed by src/platformRecord/unmanaged.ts.
 * Emails are stored lower-cased, as the record's events carry them. An email an IdP user has is never
 * listed, whatever its row says: the IdP provisions it and the reconciler adopts the account.
 */

export type UnmanagedState = "candidate" | "confirmed" | "absent" | "adopted" | "removed";

/** What the platform held when the lookup found the account (the SCIM answer, in the desired shape). */
export type UnmanagedPermissions = Pick<
  DesiredDashboardUser,
  "companyPermissions" | "roles" | "workspaces" | "permissionModel"
>;

/** The account's name and department as the lookup found them (a strip PUTs the whole resource). */
export type UnmanagedProfile = Pick<DesiredDashboardUser, "givenName" | "familyName" | "department">;

/** What a campaign's reviewer decided for the account: strip (one PUT) or delete (one DELETE, approved). */
export type UnmanagedRemoval = {
  removal: "strip" | "delete";
  by: string;
  at: Date;
  campaignId: string | null;
  itemId: string | null;
  comment: string | null;
  /** When the connector carried it out (null: still to do, or waiting for an admin's approval). */
  doneAt: Date | null;
};

export type UnmanagedAccount = {
  /** The id the queue, holds, campaign items and log know the account by (it has no IdP user). */
  accountId: string;
  userName: string;
  state: UnmanagedState;
  firstSeen: Date;
  addedBy: string | null;
  lastEventAt: Date;
  permissions: UnmanagedPermissions | null;
  platformId: string | null;
  lookedUpAt: Date | null;
  confirmedAt: Date | null;
  alertedAt: Date | null;
  profile: UnmanagedProfile | null;
  removal: UnmanagedRemoval | null;
};

/** A row of unmanaged_accounts as the driver gives it. */
export type UnmanagedRow = {
  account_id: string;
  user_name: string;
  state: UnmanagedState;
  first_seen: Date;
  added_by: string | null;
  last_event_at: Date;
  permissions: UnmanagedPermissions | null;
  platform_id: string | null;
  looked_up_at: Date | null;
  confirmed_at: Date | null;
  alerted_at: Date | null;
  profile: UnmanagedProfile | null;
  removal: UnmanagedRemoval["removal"] | null;
  removal_by: string | null;
  removal_at: Date | null;
  removal_campaign_id: string | null;
  removal_item_id: string | null;
  removal_comment: string | null;
  removed_at: Date | null;
};

export const mapUnmanagedRow = (r: UnmanagedRow): UnmanagedAccount => ({
  accountId: r.account_id,
  userName: r.user_name,
  state: r.state,
  firstSeen: r.first_seen,
  addedBy: r.added_by,
  lastEventAt: r.last_event_at,
  permissions: r.permissions,
  platformId: r.platform_id,
  lookedUpAt: r.looked_up_at,
  confirmedAt: r.confirmed_at,
  alertedAt: r.alerted_at,
  profile: r.profile,
  removal: r.removal
    ? {
        removal: r.removal,
        by: r.removal_by ?? "",
        at: r.removal_at!,
        campaignId: r.removal_campaign_id,
        itemId: r.removal_item_id === null ? null : String(r.removal_item_id),
        comment: r.removal_comment,
        doneAt: r.removed_at,
      }
    : null,
});

const NO_IDP_USER = `NOT EXISTS (SELECT 1 FROM idp_users i WHERE lower(i.user_name) = u.user_name)`;

/**
 * Events of the record for emails nobody manages, in their order. The first event seen opens the
 * row; an account-added event names who added it (an older one, imported later, still wins). A newer
 * event moves the state: a removal to 'removed'; any other to 'candidate' again unless the account
 * is already a candidate or confirmed (an account removed, or looked up and not found, that the
 * record shows again is looked up again). An older event moves no state. One statement for many
 * emails; an email named twice is written twice, in order (roundsByKey).
 */
export async function recordUnmanagedEvents(
  q: Queryable,
  events: readonly { userName: string; at: Date; actor: string; kind: string; removed: boolean }[],
): Promise<void> {
  const namesAdder = `(EXCLUDED.added_by_kind = 'account-added' AND (u.added_by_kind IS DISTINCT FROM 'account-added' OR EXCLUDED.first_seen < u.first_seen))
      OR (u.added_by_kind IS DISTINCT FROM 'account-added' AND EXCLUDED.first_seen < u.first_seen)`;
  for (const round of roundsByKey(events, (e) => e.userName))
    await q.query(
      `INSERT INTO unmanaged_accounts AS u (user_name, state, first_seen, added_by, added_by_kind, last_event_at)
       SELECT name, state, at, actor, kind, at
         FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::text[], $5::text[]) AS e(name, state, at, actor, kind)
       ON CONFLICT (user_name) DO UPDATE SET
         first_seen = LEAST(u.first_seen, EXCLUDED.first_seen),
         added_by = CASE WHEN ${namesAdder} THEN EXCLUDED.added_by ELSE u.added_by END,
         added_by_kind = CASE WHEN ${namesAdder} THEN EXCLUDED.added_by_kind ELSE u.added_by_kind END,
         last_event_at = GREATEST(u.last_event_at, EXCLUDED.last_event_at),
         state = CASE
           WHEN EXCLUDED.last_event_at < u.last_event_at THEN u.state
           WHEN EXCLUDED.state = 'removed' THEN 'removed'
           WHEN u.state IN ('candidate', 'confirmed') THEN u.state
           ELSE 'candidate' END`,
      [
        round.map((e) => e.userName),
        round.map((e) => (e.removed ? "removed" : "candidate")),
        round.map((e) => e.at),
        round.map((e) => e.actor),
        round.map((e) => e.kind),
      ],
    );
}

/** Rows whose email an IdP user now has leave the list: the IdP provisions them (adopted on 409). */
export async function markAdoptedByIdp(q: Queryable): Promise<number> {
  const rows = await q.query<{ user_name: string }>(
    `UPDATE unmanaged_accounts u SET state = 'adopted'
      WHERE state <> 'adopted' AND EXISTS (SELECT 1 FROM idp_users i WHERE lower(i.user_name) = u.user_name)
      RETURNING user_name`,
  );
  return rows.length;
}

/** The oldest candidate to look up (none an IdP user now has). */
export async function nextCandidate(q: Queryable): Promise<UnmanagedAccount | undefined> {
  const rows = await q.query<UnmanagedRow>(
    `SELECT * FROM unmanaged_accounts u WHERE state = 'candidate' AND ${NO_IDP_USER}
      ORDER BY first_seen, user_name LIMIT 1`,
  );
  return rows[0] ? mapUnmanagedRow(rows[0]) : undefined;
}

/**
 * The lookup's answer: found → 'confirmed' with what it holds, else 'absent'. Only a row still a
 * candidate moves (a removal recorded meanwhile wins). Returns the row when it was confirmed now and
 * never alerted (the caller raises the alert and calls markAlerted in the same transaction).
 */
export async function recordLookup(
  q: Queryable,
  userName: string,
  found: { platformId: string; permissions: UnmanagedPermissions; profile?: UnmanagedProfile } | null,
  now: Date,
): Promise<UnmanagedAccount | undefined> {
  const rows = await q.query<UnmanagedRow>(
    found
      ? `UPDATE unmanaged_accounts SET state = 'confirmed', platform_id = $3, permissions = $4, profile = $5,
                looked_up_at = $2, confirmed_at = COALESCE(confirmed_at, $2)
          WHERE user_name = $1 AND state = 'candidate' RETURNING *`
      : `UPDATE unmanaged_accounts SET state = 'absent', looked_up_at = $2
          WHERE user_name = $1 AND state = 'candidate' RETURNING *`,
    found
      ? [userName, now, found.platformId, JSON.stringify(found.permissions), JSON.stringify(found.profile ?? null)]
      : [userName, now],
  );
  const row = rows[0];
  return row && row.state === "confirmed" && !row.alerted_at ? mapUnmanagedRow(row) : undefined;
}

export async function markAlerted(q: Queryable, userName: string, now: Date): Promise<void> {
  await q.query(`UPDATE unmanaged_accounts SET alerted_at = $2 WHERE user_name = $1`, [userName, now]);
}

/** The accounts in `states`, oldest first, none an IdP user now has. */
export async function listUnmanagedAccounts(
  q: Queryable,
  states: readonly UnmanagedState[],
  limit = 10_000,
): Promise<UnmanagedAccount[]> {
  const rows = await q.query<UnmanagedRow>(
    `SELECT * FROM unmanaged_accounts u WHERE state = ANY ($1::text[]) AND ${NO_IDP_USER}
      ORDER BY first_seen, user_name LIMIT $2`,
    [states, limit],
  );
  return rows.map(mapUnmanagedRow);
}

/** The discovery lane's lock: one replica looks up at a time (another key than every other lock). */
const DISCOVERY_LOCK = 7_429_045;

/** Runs `work` if no other replica holds the discovery lock (else undefined); the lock goes with the connection. */
export async function withDiscoveryLock<T>(
  db: { session<R>(work: (session: Queryable) => Promise<R>): Promise<R> },
  work: () => Promise<T>,
): Promise<T | undefined> {
  return db.session(async (session) => {
    const [row] = await session.query<{ ok: boolean }>(`SELECT pg_try_advisory_lock($1) AS ok`, [DISCOVERY_LOCK]);
    if (!row?.ok) return undefined;
    try {
      return await work();
    } finally {
      await session.query(`SELECT pg_advisory_unlock($1)`, [DISCOVERY_LOCK]);
    }
  });
}
