import type { Queryable } from "../database.js";
import type { DeniedGrant } from "../../mapping/denies.js";

/**
 * Local denies of one user × grant (a "revoke" in an access campaign). Active while `ended_at` is
 * null; they end when the IdP no longer grants the grant or when an admin lifts them, never by time.
 * A revoked bundle (a granular rule's strings in one workspace) is one deny per string, each with
 * `partOf` naming the bundle and the campaign item it was revoked as.
 */

type Db = Queryable;

export type AccessDeny = DeniedGrant & {
  id: string;
  /** The bundle this string was revoked with (its name, src/mapping/reasons.ts `bundleLabel`); null: revoked alone. */
  partOf: string | null;
  userId: string;
  userName: string;
  campaignId: string | null;
  campaignName: string;
  itemId: string | null;
  decidedBy: string;
  decidedAt: Date;
  comment: string;
  endedAt: Date | null;
  endReason: "idp-no-longer-grants" | "lifted" | null;
  endedBy: string | null;
};

type Row = {
  id: string;
  user_id: string;
  user_name: string;
  scope: DeniedGrant["scope"];
  workspace: string | null;
  team: string | null;
  permission: string;
  part_of: string | null;
  campaign_id: string | null;
  campaign_name: string;
  item_id: string | null;
  decided_by: string;
  decided_at: Date;
  comment: string;
  ended_at: Date | null;
  end_reason: AccessDeny["endReason"];
  ended_by: string | null;
};

const mapDeny = (r: Row): AccessDeny => ({
  id: String(r.id),
  userId: r.user_id,
  userName: r.user_name,
  scope: r.scope,
  workspace: r.workspace,
  team: r.team,
  permission: r.permission,
  partOf: r.part_of,
  campaignId: r.campaign_id,
  campaignName: r.campaign_name,
  itemId: r.item_id === null ? null : String(r.item_id),
  decidedBy: r.decided_by,
  decidedAt: r.decided_at,
  comment: r.comment,
  endedAt: r.ended_at,
  endReason: r.end_reason,
  endedBy: r.ended_by,
});

export type NewDeny = Omit<AccessDeny, "id" | "endedAt" | "endReason" | "endedBy">;

/** Opens the denies; one already active for the same user × grant is kept (the first decision stands). */
export async function insertDenies(tx: Db, denies: readonly NewDeny[]): Promise<void> {
  if (!denies.length) return;
  await tx.query(
    `INSERT INTO access_denies (user_id, user_name, scope, workspace, team, permission, part_of, campaign_id, campaign_name, item_id, decided_by, decided_at, comment)
     SELECT * FROM jsonb_to_recordset($1::jsonb) AS d(user_id uuid, user_name text, scope text, workspace text, team text, permission text,
            part_of text, campaign_id uuid, campaign_name text, item_id bigint, decided_by text, decided_at timestamptz, comment text)
     ON CONFLICT DO NOTHING`,
    [
      JSON.stringify(
        denies.map((d) => ({
          user_id: d.userId,
          user_name: d.userName,
          scope: d.scope,
          workspace: d.workspace,
          team: d.team,
          permission: d.permission,
          part_of: d.partOf,
          campaign_id: d.campaignId,
          campaign_name: d.campaignName,
          item_id: d.itemId,
          decided_by: d.decidedBy,
          decided_at: d.decidedAt,
          comment: d.comment,
        })),
      ),
    ],
  );
}

/** The active denies of these users. */
export function listActiveDenies(db: Db, userIds: readonly string[]): Promise<Map<string, AccessDeny[]>> {
  return listDeniesInForce(db, userIds);
}

/** Every deny (active first, then the most recent), optionally of one user or one campaign. */
export async function listDenies(
  db: Db,
  filter: { userId?: string; campaignId?: string; activeOnly?: boolean },
  limit: number,
): Promise<AccessDeny[]> {
  const rows = (await db.query(
    `SELECT * FROM access_denies WHERE ($1::uuid IS NULL OR user_id = $1::uuid) AND ($2::uuid IS NULL OR campaign_id = $2::uuid)
        AND (NOT $3 OR ended_at IS NULL)
      ORDER BY ended_at IS NOT NULL, decided_at DESC, id DESC LIMIT $4`,
    [filter.userId ?? null, filter.campaignId ?? null, filter.activeOnly ?? false, limit],
  )) as Row[];
  return rows.map(mapDeny);
}

/**
 * The denies in force for these users now (`at` absent) or at `at`: decided by then and not
 * ended by then. The access report shows them on the rows of the grants they remove.
 */
export async function listDeniesInForce(
  db: Db,
  userIds: readonly string[],
  at?: Date,
): Promise<Map<string, AccessDeny[]>> {
  const byUser = new Map<string, AccessDeny[]>();
  if (!userIds.length) return byUser;
  const rows = (await db.query(
    at
      ? `SELECT * FROM access_denies WHERE user_id = ANY($1::uuid[]) AND decided_at <= $2 AND (ended_at IS NULL OR ended_at > $2) ORDER BY id`
      : `SELECT * FROM access_denies WHERE user_id = ANY($1::uuid[]) AND ended_at IS NULL ORDER BY id`,
    at ? [userIds, at] : [userIds],
  )) as Row[];
  for (const r of rows) {
    let list = byUser.get(r.user_id);
    if (!list) byUser.set(r.user_id, (list = []));
    list.push(mapDeny(r));
  }
  return byUser;
}

/**
 * Ends active denies and the rest of their bundles (the other strings revoked with them as one
 * item); returns those it ended (a deny already ended by someone else is not returned).
 */
export async function endDeniesWithTheirBundles(
  tx: Db,
  ids: readonly string[],
  end: { at: Date; reason: "idp-no-longer-grants" | "lifted"; by: string | null },
): Promise<AccessDeny[]> {
  if (!ids.length) return [];
  const rows = (await tx.query(
    `UPDATE access_denies d SET ended_at = $2, end_reason = $3, ended_by = $4
       FROM (SELECT id, user_id, item_id, part_of FROM access_denies WHERE id = ANY($1::bigint[]) AND ended_at IS NULL) given
      WHERE d.ended_at IS NULL
        AND (d.id = given.id OR (given.part_of IS NOT NULL AND d.user_id = given.user_id AND d.item_id = given.item_id AND d.part_of = given.part_of))
      RETURNING d.*`,
    [ids, end.at, end.reason, end.by],
  )) as Row[];
  return rows.map(mapDeny).sort((a, b) => Number(BigInt(a.id) - BigInt(b.id)));
}

/** Ends active denies; returns those it ended (a deny already ended by someone else is not returned). */
export async function endDenies(
  tx: Db,
  ids: readonly string[],
  end: { at: Date; reason: "idp-no-longer-grants" | "lifted"; by: string | null },
): Promise<AccessDeny[]> {
  if (!ids.length) return [];
  const rows = (await tx.query(
    `UPDATE access_denies SET ended_at = $2, end_reason = $3, ended_by = $4 WHERE id = ANY($1::bigint[]) AND ended_at IS NULL RETURNING *`,
    [ids, end.at, end.reason, end.by],
  )) as Row[];
  return rows.map(mapDeny);
}
