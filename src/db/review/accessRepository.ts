import type { Queryable } from "../database.js";
import type { ExplainedGrant } from "../../mapping/reasons.js";
import type { DesiredDashboardUser } from "../../mapping/types.js";
import { likePrefix } from "../sql.js";

/**
 * The access report's reads (src/review/access/): what the platform held per user, today (the
 * last applied state) or at a past moment (rebuilt from the reconciliation log), each user's
 * history of applied states, IdP groups, and the mapping in force. Reads only.
 */

type Db = Queryable;

/** Log entries after which the platform held `after` (null: no account). Kept in step with the partial index. */
const APPLIED = `user_id IS NOT NULL AND ((action IN ('create', 'update', 'adopt', 'deprovision') AND outcome = 'succeeded') OR (action = 'drift' AND outcome = 'enforced'))`;

export type HeldAccount = {
  userId: string;
  userName: string;
  held: DesiredDashboardUser;
  /** As of a past moment: the reasons stored with the log entry that applied `held` (null: none stored). */
  appliedReasons: ExplainedGrant[] | null;
  verifiedAt: Date | null;
  createdByConnector: boolean;
};
/** `permission`, `team` and `group` narrow the accounts (the rows are filtered again by the caller). */
export type HeldFilter = {
  at?: Date;
  user?: string;
  workspace?: string;
  permission?: string;
  team?: string;
  group?: string;
};
export type HeldCursor = { userName: string; userId: string };

type HeldRow = {
  user_id: string;
  user_name: string;
  held: DesiredDashboardUser;
  applied_reasons: ExplainedGrant[] | null;
  verified_at: Date | null;
  created_by_connector: boolean;
};

/**
 * The accounts the platform held (now, or at `filter.at`), as one SQL source with the filters
 * applied. `afterUserId` narrows the log scan itself (exports as of a moment page by user id).
 */
function heldSource(filter: HeldFilter, params: unknown[], afterUserId?: string): string {
  const add = (value: unknown) => `$${params.push(value)}`;
  const source = filter.at
    ? `SELECT user_id, after->>'userName' AS user_name, after AS held, reasons AS applied_reasons, NULL::timestamptz AS verified_at, true AS created_by_connector
       FROM (SELECT DISTINCT ON (user_id) user_id, after, reasons FROM reconcile_log WHERE ${APPLIED} AND at <= ${add(filter.at)}
             ${afterUserId ? `AND user_id > ${add(afterUserId)}::uuid` : ""} ORDER BY user_id, at DESC, id DESC) s
       WHERE after IS NOT NULL`
    : `SELECT user_id, user_name, last_applied AS held, NULL::jsonb AS applied_reasons, last_verified_at AS verified_at, created_by_connector
       FROM platform_accounts WHERE platform_id IS NOT NULL AND last_applied IS NOT NULL`;
  const where: string[] = [];
  if (filter.user) where.push(`lower(user_name) LIKE ${add(likePrefix(filter.user))}`);
  if (filter.workspace)
    where.push(`held->'workspaces' @> ${add(JSON.stringify([{ appGroupName: filter.workspace }]))}::jsonb`);
  if (filter.team)
    where.push(
      `jsonb_path_exists(held, '$.workspaces[*].team[*] ? (@.teamName == $t)', jsonb_build_object('t', ${add(filter.team)}::text))`,
    );
  if (filter.permission)
    where.push(
      `jsonb_path_exists(held, 'strict $.** ? (@ == $p)', jsonb_build_object('p', ${add(filter.permission)}::text))`,
    );
  if (filter.group) {
    // A member now, or (as of a past moment) one of the groups the stored reasons name then.
    const group = add(filter.group);
    where.push(
      `(EXISTS (SELECT 1 FROM idp_group_members m JOIN idp_groups g ON g.id = m.group_id WHERE m.user_id = held.user_id AND lower(g.display_name) = lower(${group}))
        OR EXISTS (SELECT 1 FROM jsonb_path_query(held.applied_reasons, '$[*].reasons[*].groups[*]') n WHERE lower(n #>> '{}') = lower(${group})))`,
    );
  }
  return `SELECT * FROM (${source}) held ${where.length ? `WHERE ${where.join(" AND ")}` : ""}`;
}

const mapHeld = (r: HeldRow): HeldAccount => ({
  userId: r.user_id,
  userName: r.user_name,
  held: r.held,
  appliedReasons: r.applied_reasons,
  verifiedAt: r.verified_at,
  createdByConnector: r.created_by_connector,
});

/** One page of held accounts in userName order, after `cursor`. */
export async function listHeldAccounts(
  db: Db,
  filter: HeldFilter,
  cursor: HeldCursor | undefined,
  limit: number,
): Promise<HeldAccount[]> {
  const params: unknown[] = [];
  const source = heldSource(filter, params);
  const after = cursor
    ? `WHERE (user_name, user_id) > ($${params.push(cursor.userName)}, $${params.push(cursor.userId)}::uuid)`
    : "";
  const rows: HeldRow[] = await db.query(
    `SELECT * FROM (${source}) page ${after} ORDER BY user_name, user_id LIMIT $${params.push(limit)}`,
    params,
  );
  return rows.map(mapHeld);
}

/**
 * Accounts held at `filter.at` in user id order after `afterUserId`: each call reads only the log
 * of the accounts it returns (the userName order of `listHeldAccounts` needs the whole log).
 */
export async function listHeldAccountsById(
  db: Db,
  filter: HeldFilter & { at: Date },
  afterUserId: string | undefined,
  limit: number,
): Promise<HeldAccount[]> {
  const params: unknown[] = [];
  const source = heldSource(filter, params, afterUserId);
  const rows: HeldRow[] = await db.query(`${source} ORDER BY user_id LIMIT $${params.push(limit)}`, params);
  return rows.map(mapHeld);
}

/** Per user (ids given), every applied state up to `at`, oldest first: when each grant began. */
export async function listAppliedHistory(
  db: Db,
  userIds: readonly string[],
  at: Date | undefined,
): Promise<Map<string, { logId: string; at: Date; after: DesiredDashboardUser | null }[]>> {
  const rows: { user_id: string; id: string; at: Date; after: DesiredDashboardUser | null }[] = await db.query(
    `SELECT user_id, id, at, after FROM reconcile_log WHERE ${APPLIED} AND user_id = ANY($1::uuid[]) ${at ? "AND at <= $2" : ""} ORDER BY user_id, at, id`,
    at ? [userIds, at] : [userIds],
  );
  const byUser = new Map<string, { logId: string; at: Date; after: DesiredDashboardUser | null }[]>();
  for (const r of rows) {
    let list = byUser.get(r.user_id);
    if (!list) byUser.set(r.user_id, (list = []));
    list.push({ logId: r.id, at: r.at, after: r.after });
  }
  return byUser;
}

type AccessGroup = { id: string; displayName: string; externalId: string | null };
/** A value the IdP assigned in the user's roles[] or entitlements[] (the mapping's catalogue). */
type AccessAssignment = { attribute: "roles" | "entitlements"; value: string };
export type IdpFacts = { department: string | null; groups: AccessGroup[]; assigned: AccessAssignment[] };

/** The IdP users' attributes the mapping reads, and their groups (as they are now). */
export async function listIdpFacts(db: Db, userIds: readonly string[]): Promise<Map<string, IdpFacts>> {
  const rows: {
    id: string;
    department: string | null;
    group_id: string | null;
    display_name: string | null;
    external_id: string | null;
    assigned: AccessAssignment[];
  }[] = await db.query(
    `SELECT u.id, u.department, g.id AS group_id, g.display_name, g.external_id,
            (SELECT COALESCE(json_agg(json_build_object('attribute', a.attribute, 'value', a.item->>'value')), '[]'::json)
               FROM (SELECT 'roles' AS attribute, r AS item FROM jsonb_array_elements(
                       CASE jsonb_typeof(u.resource->'roles') WHEN 'array' THEN u.resource->'roles' ELSE '[]' END) r
                     UNION ALL
                     SELECT 'entitlements', e FROM jsonb_array_elements(
                       CASE jsonb_typeof(u.resource->'entitlements') WHEN 'array' THEN u.resource->'entitlements' ELSE '[]' END) e) a
              WHERE jsonb_typeof(a.item->'value') = 'string') AS assigned
       FROM idp_users u LEFT JOIN idp_group_members m ON m.user_id = u.id LEFT JOIN idp_groups g ON g.id = m.group_id
      WHERE u.id = ANY($1::uuid[]) ORDER BY u.id, g.display_name`,
    [userIds],
  );
  const facts = new Map<string, IdpFacts>();
  for (const r of rows) {
    let user = facts.get(r.id);
    if (!user) facts.set(r.id, (user = { department: r.department, groups: [], assigned: r.assigned }));
    if (r.group_id !== null && r.display_name !== null)
      user.groups.push({ id: r.group_id, displayName: r.display_name, externalId: r.external_id });
  }
  return facts;
}

/** The end of the last verifying resync that finished by `at` (or now). */
export async function lastVerifyingResyncAt(db: Db, at: Date | undefined): Promise<Date | null> {
  const rows: { finished_at: Date | null }[] = await db.query(
    `SELECT max(finished_at) AS finished_at FROM resync_runs WHERE verify AND NOT dry_run AND status = 'succeeded' ${at ? "AND finished_at <= $1" : ""}`,
    at ? [at] : [],
  );
  return rows[0]?.finished_at ?? null;
}

/** Accounts held (now, or at `at`) per workspace × permission; company permissions under workspace null. */
export async function countGrantsByWorkspace(
  db: Db,
  filter: HeldFilter,
): Promise<{ workspace: string | null; permission: string; users: number }[]> {
  const params: unknown[] = [];
  const source = heldSource(filter, params);
  return db.query(
    `WITH held AS (${source})
     SELECT NULL AS workspace, p AS permission, count(*)::int AS users FROM held, jsonb_array_elements_text(held->'companyPermissions') p GROUP BY p
     UNION ALL
     SELECT w->>'appGroupName', p, count(*)::int FROM held, jsonb_array_elements(held->'workspaces') w, jsonb_array_elements_text(w->'appGroupPermissions') p
       ${filter.workspace ? `WHERE w->>'appGroupName' = $${params.push(filter.workspace)}` : ""} GROUP BY 1, 2
     ORDER BY 1 NULLS FIRST, 2`,
    params,
  );
}

export type AccessDifference = {
  userId: string;
  userName: string;
  kind: "not-created-by-connector" | "drift";
  at: Date | null;
  detail: unknown;
};

/** Accounts the connector adopted rather than created, and drift reported since the last apply. */
export async function listAccessDifferences(db: Db, limit: number): Promise<AccessDifference[]> {
  const rows: {
    user_id: string;
    user_name: string;
    kind: AccessDifference["kind"];
    at: Date | null;
    detail: unknown;
  }[] = await db.query(
    `(SELECT user_id, user_name, 'not-created-by-connector' AS kind, applied_at AS at, NULL::jsonb AS detail
        FROM platform_accounts WHERE platform_id IS NOT NULL AND NOT created_by_connector ORDER BY user_name LIMIT $1)
     UNION ALL
     (SELECT DISTINCT ON (l.user_id) l.user_id, l.user_name, 'drift', l.at, l.changes
        FROM reconcile_log l JOIN platform_accounts a ON a.user_id = l.user_id
       WHERE l.action = 'drift' AND l.outcome = 'reported' AND l.at >= coalesce(a.applied_at, '-infinity')
       ORDER BY l.user_id, l.at DESC LIMIT $1)`,
    [limit],
  );
  return rows.map((r) => ({ userId: r.user_id, userName: r.user_name, kind: r.kind, at: r.at, detail: r.detail }));
}
