import type { Queryable } from "../database.js";
import type { OutsideAccess } from "../../reconcile/outsideAccess.js";

/**
 * Changes made to managed accounts on the platform by someone other than the connector and kept
 * (PLATFORM_OUTSIDE_CHANGES=report): one row per account, the latest. `permissions`: what the
 * account held beyond and short of the mapping's grants when read; `removed`: the account was
 * removed by hand (only shown).
 */
export type OutsideChange = {
  userId: string;
  userName: string;
  change: "permissions" | "removed";
  /** The report's event name ("Updated Account Permission"). */
  event: string;
  actor: string;
  at: Date;
  access: OutsideAccess | null;
  recordedAt: Date;
};

type Row = {
  user_id: string;
  user_name: string;
  change: OutsideChange["change"];
  event: string;
  actor: string;
  at: Date;
  granted: OutsideAccess["granted"] | null;
  withdrawn: OutsideAccess["withdrawn"] | null;
  recorded_at: Date;
};

const mapChange = (r: Row): OutsideChange => ({
  userId: r.user_id,
  userName: r.user_name,
  change: r.change,
  event: r.event,
  actor: r.actor,
  at: r.at,
  access: r.granted && r.withdrawn ? { granted: r.granted, withdrawn: r.withdrawn } : null,
  recordedAt: r.recorded_at,
});

export async function saveOutsideChange(db: Queryable, change: OutsideChange): Promise<void> {
  await db.query(
    `INSERT INTO platform_outside_changes (user_id, user_name, change, event, actor, at, granted, withdrawn, recorded_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (user_id) DO UPDATE SET user_name = EXCLUDED.user_name, change = EXCLUDED.change, event = EXCLUDED.event,
       actor = EXCLUDED.actor, at = EXCLUDED.at, granted = EXCLUDED.granted, withdrawn = EXCLUDED.withdrawn,
       recorded_at = EXCLUDED.recorded_at`,
    [
      change.userId,
      change.userName,
      change.change,
      change.event,
      change.actor,
      change.at,
      change.access ? JSON.stringify(change.access.granted) : null,
      change.access ? JSON.stringify(change.access.withdrawn) : null,
      change.recordedAt,
    ],
  );
}

/** `forUpdate`: locked, for a change of it in the caller's transaction (a campaign's revoke). */
export async function getOutsideChange(
  db: Queryable,
  userId: string,
  forUpdate = false,
): Promise<OutsideChange | undefined> {
  const rows: Row[] = await db.query(
    `SELECT * FROM platform_outside_changes WHERE user_id = $1${forUpdate ? " FOR UPDATE" : ""}`,
    [userId],
  );
  return rows[0] ? mapChange(rows[0]) : undefined;
}

export async function getOutsideChanges(
  db: Queryable,
  userIds: readonly string[],
): Promise<Map<string, OutsideChange>> {
  if (!userIds.length) return new Map();
  const rows: Row[] = await db.query(`SELECT * FROM platform_outside_changes WHERE user_id = ANY($1::uuid[])`, [
    userIds,
  ]);
  return new Map(rows.map((r) => [r.user_id, mapChange(r)]));
}

/** The account holds what the mapping grants again (read, or put back): nothing outside is kept. */
export async function clearOutsideChange(db: Queryable, userId: string): Promise<void> {
  await db.query(`DELETE FROM platform_outside_changes WHERE user_id = $1`, [userId]);
}
