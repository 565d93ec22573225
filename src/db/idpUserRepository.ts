import { randomUUID } from "node:crypto";
import { constraintName, sqlState, UniqueViolationError } from "../errors.js";
import type { SqlCondition } from "./filterSql.js";
import type { SqlSort } from "./sortSql.js";
import type { Database, Queryable } from "./database.js";
import { readQuery } from "./idpReadPath.js";
import { markDirtyCtes, markDirtyParams } from "./reconcileQueueRepository.js";
import type { DirtyTrigger } from "../reconcile/vocabulary.js";
import { likePrefix } from "./sql.js";
import { isUuid } from "../ids.js";

/**
 * IdP users as the SCIM server stores them: the canonical SCIM resource (jsonb) plus the columns
 * that filters, the case-insensitive userName uniqueness and the reconciler read. Functions take
 * a `Queryable` (the Database, or a transaction) so writes join the caller's
 * transaction.
 */

export type StoredResource = {
  id: string;
  resource: Record<string, unknown>;
  version: number;
  createdAt: Date;
  updatedAt: Date;
};

export type IdpUserColumns = {
  userName: string;
  externalId: string | null;
  active: boolean;
  displayName: string | null;
  givenName: string | null;
  familyName: string | null;
  department: string | null;
};

type Row = { id: string; resource: Record<string, unknown>; version: number; created_at: Date; updated_at: Date };
const RETURNING = `id, resource, version, created_at, updated_at`;

export const toStored = (r: Row): StoredResource => ({
  id: r.id,
  resource: r.resource,
  version: r.version,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

function uniqueness(error: unknown): never {
  if (sqlState(error) === "23505")
    throw new UniqueViolationError("A user with this userName already exists", constraintName(error));
  throw error;
}

/** A user write's parameters: $1 the id, $2–$8 the columns, $9 the resource, then `rest`. */
function writeParams(id: string, c: IdpUserColumns, resource: Record<string, unknown>, ...rest: unknown[]): unknown[] {
  return [
    id,
    c.userName,
    c.externalId,
    c.active,
    c.displayName,
    c.givenName,
    c.familyName,
    c.department,
    resource,
    ...rest,
  ];
}

/** The user a write returned, undefined when it wrote nothing; a userName already taken is a UniqueViolationError. */
async function written(statement: Promise<Row[]>): Promise<StoredResource | undefined> {
  try {
    const rows = await statement;
    return rows[0] && toStored(rows[0]);
  } catch (error) {
    uniqueness(error);
  }
}

const INSERT_MARKED = `
  WITH inserted AS (
     INSERT INTO idp_users (id, user_name, external_id, active, display_name, given_name, family_name, department, resource)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${RETURNING}),
   ${markDirtyCtes("ARRAY[$1::uuid]", "$10::jsonb", "$11")}
  SELECT i.* FROM inserted i LEFT JOIN notified ON true`;

/**
 * Stores a new user and marks it dirty in one statement (one round trip, atomic on its own: no
 * transaction needed). The id is made here so that the trigger can name `Users/<id>`.
 */
export async function insertIdpUserMarked(
  db: Database,
  columns: IdpUserColumns,
  resource: Record<string, unknown>,
  trigger: (id: string) => DirtyTrigger,
): Promise<StoredResource> {
  const id = randomUUID();
  const params = writeParams(id, columns, resource, ...markDirtyParams(trigger(id)));
  return (await written(db.prepared<Row>("idp_insert_user_marked", INSERT_MARKED, params)))!;
}

export async function getIdpUser(q: Queryable, id: string): Promise<StoredResource | undefined> {
  if (!isUuid(id)) return undefined;
  const rows = await readQuery<Row>(q, `SELECT ${RETURNING} FROM idp_users WHERE id = $1`, [id]);
  return rows[0] && toStored(rows[0]);
}

/** The user, row-locked until the transaction ends (read-modify-write of a PATCH). */
export async function lockIdpUser(q: Queryable, id: string): Promise<StoredResource | undefined> {
  if (!isUuid(id)) return undefined;
  const rows: Row[] = await q.query(`SELECT ${RETURNING} FROM idp_users WHERE id = $1 FOR UPDATE`, [id]);
  return rows[0] && toStored(rows[0]);
}

const updateMarked = (where: string) => `
  WITH updated AS (
     UPDATE idp_users SET user_name = $2, external_id = $3, active = $4, display_name = $5, given_name = $6,
            family_name = $7, department = $8, resource = $9, version = version + 1, updated_at = now()
      WHERE ${where} RETURNING ${RETURNING}),
   ${markDirtyCtes("ARRAY(SELECT id FROM updated)", "$10::jsonb", "$11")}
  SELECT u.* FROM updated u LEFT JOIN notified ON true`;
const UPDATE_MARKED = updateMarked("id = $1");
const UPDATE_VERSION_MARKED = updateMarked("id = $1 AND version = $12");

/** updateIdpUser and markUsersDirty of the user in one statement; undefined (nothing marked) when there is no such user. */
export async function updateIdpUserMarked(
  q: Queryable,
  id: string,
  columns: IdpUserColumns,
  resource: Record<string, unknown>,
  trigger: DirtyTrigger,
): Promise<StoredResource | undefined> {
  if (!isUuid(id)) return undefined;
  return written(q.query<Row>(UPDATE_MARKED, writeParams(id, columns, resource, ...markDirtyParams(trigger))));
}

/**
 * updateIdpUserMarked as one prepared statement that changes the user only while its version is
 * still `version` (the one its new state was computed from); undefined when it no longer is, or
 * the user is gone. Under READ COMMITTED an UPDATE that waited for a concurrent writer re-checks
 * its WHERE on the row that writer left, so a lost update cannot slip through.
 */
export function updateIdpUserIfVersionMarked(
  db: Database,
  id: string,
  version: number,
  columns: IdpUserColumns,
  resource: Record<string, unknown>,
  trigger: DirtyTrigger,
): Promise<StoredResource | undefined> {
  const params = writeParams(id, columns, resource, ...markDirtyParams(trigger), version);
  return written(db.prepared<Row>("idp_update_user_version_marked", UPDATE_VERSION_MARKED, params));
}

const REPLACE_MARKED = `
  WITH current AS (SELECT id, active FROM idp_users WHERE id = $1 FOR UPDATE),
   updated AS (
     UPDATE idp_users u SET user_name = $2, external_id = $3, active = $4, display_name = $5, given_name = $6,
            family_name = $7, department = $8, resource = $9, version = u.version + 1, updated_at = now()
       FROM current c WHERE u.id = c.id
     RETURNING u.id, u.resource, u.version, u.created_at, u.updated_at, c.active AS was_active),
   ${markDirtyCtes("ARRAY(SELECT id FROM updated)", "(SELECT CASE WHEN was_active THEN $10::jsonb ELSE $11::jsonb END FROM updated)", "$12")}
  SELECT u.id, u.resource, u.version, u.created_at, u.updated_at FROM updated u LEFT JOIN notified ON true`;

/**
 * Locks, replaces and marks the user in one statement (no transaction around it), when nothing but
 * the trigger depends on the row as it was: `trigger(wasActive)` names the change for either case.
 * Undefined (nothing written) when there is no such user.
 */
export async function replaceIdpUserMarked(
  db: Database,
  id: string,
  columns: IdpUserColumns,
  resource: Record<string, unknown>,
  trigger: (wasActive: boolean) => DirtyTrigger,
): Promise<StoredResource | undefined> {
  if (!isUuid(id)) return undefined;
  const [wasActive, rank] = markDirtyParams(trigger(true));
  const [wasInactive] = markDirtyParams(trigger(false));
  const params = writeParams(id, columns, resource, wasActive, wasInactive, rank);
  return written(db.prepared<Row>("idp_replace_user_marked", REPLACE_MARKED, params));
}

/** Deletes the user (its memberships go with it); false when there was none. */
export async function deleteIdpUser(q: Queryable, id: string): Promise<boolean> {
  if (!isUuid(id)) return false;
  const rows = await q.query(`DELETE FROM idp_users WHERE id = $1 RETURNING id`, [id]);
  return rows.length > 0;
}

export type Page<T> = { total: number; items: T[] };

/** One page of users matching `where` (parameters from $1), by `sort` or oldest first; startIndex is 1-based. */
export function listIdpUsers(
  q: Queryable,
  where: SqlCondition | undefined,
  startIndex: number,
  count: number,
  sort?: SqlSort,
): Promise<Page<StoredResource>> {
  return listPage(q, "idp_users u", "u", where, startIndex, count, sort);
}

/** ORDER BY for a page: the sort key first when there is one, then age and id so pages never overlap. */
function orderBy(alias: string, sort: SqlSort | undefined): string {
  const stable = `${alias}.created_at, ${alias}.id`;
  return sort?.key ? `${sort.key} ${sort.descending ? "DESC" : "ASC"}, ${stable}` : stable;
}

function pageSql(table: string, alias: string, condition: string, n: number, sort: SqlSort | undefined): string {
  return `SELECT ${alias}.id, ${alias}.resource, ${alias}.version, ${alias}.created_at, ${alias}.updated_at, count(*) OVER ()::int AS total
       FROM ${table} ${condition}
      ORDER BY ${orderBy(alias, sort)}
      LIMIT $${n + 1} OFFSET $${n + 2}`;
}

/** Page statements by table and condition, for unsorted pages (a list with a filter, nearly every IdP read). */
const pageTexts = new Map<string, Map<string, string>>();
const MAX_PAGE_TEXTS = 256;

/**
 * The SELECT of a page. Unsorted ones are kept by their condition's SQL, so that the same statement
 * is the same string each time (readQuery finds its prepared name by a hash V8 has already
 * computed, instead of building and hashing 300 characters per request); a bounded number of them.
 */
function pageText(table: string, alias: string, condition: string, n: number, sort: SqlSort | undefined): string {
  if (sort) return pageSql(table, alias, condition, n, sort);
  let byCondition = pageTexts.get(table);
  if (!byCondition) pageTexts.set(table, (byCondition = new Map()));
  let text = byCondition.get(condition);
  if (text === undefined) {
    text = pageSql(table, alias, condition, n, undefined);
    if (byCondition.size < MAX_PAGE_TEXTS) byCondition.set(condition, text);
  }
  return text;
}

export async function listPage(
  q: Queryable,
  table: string,
  alias: string,
  where: SqlCondition | undefined,
  startIndex: number,
  count: number,
  sort?: SqlSort,
): Promise<Page<StoredResource>> {
  const condition = where ? `WHERE ${where.sql}` : "";
  const params = where ? [...where.params] : [];
  if (count === 0) {
    const rows = await readQuery<{ total: number }>(
      q,
      `SELECT count(*)::int AS total FROM ${table} ${condition}`,
      params,
    );
    return { total: rows[0]?.total ?? 0, items: [] };
  }
  const n = params.length;
  const rows = await readQuery<Row & { total: number }>(q, pageText(table, alias, condition, n, sort), [
    ...params,
    count,
    startIndex - 1,
  ]);
  if (rows.length) return { total: rows[0]!.total, items: rows.map(toStored) };
  if (startIndex <= 1) return { total: 0, items: [] };
  // Past the last page: the window count has no row to ride on, so count separately.
  const totals = await readQuery<{ total: number }>(
    q,
    `SELECT count(*)::int AS total FROM ${table} ${condition}`,
    params,
  );
  return { total: totals[0]?.total ?? 0, items: [] };
}

// IdP users as the admin UI lists them: with their platform account and queue state in one row.

export type AdminUserRow = {
  id: string;
  userName: string;
  active: boolean;
  groups: number;
  accountState: "creating" | "active" | null;
  appliedAt: Date | null;
  queued: boolean;
  parked: boolean;
  hold: "deprovision" | "email_change" | null;
};

type AdminRow = {
  id: string;
  user_name: string;
  active: boolean;
  groups: number;
  account_state: "creating" | "active" | null;
  applied_at: Date | null;
  queued: boolean;
  parked: boolean;
  hold: AdminUserRow["hold"];
};

const ADMIN_SELECT = `
  SELECT u.id, u.user_name, u.active,
         (SELECT count(*)::int FROM idp_group_members m WHERE m.user_id = u.id) AS groups,
         a.state AS account_state, a.applied_at,
         (q.user_id IS NOT NULL AND q.parked_at IS NULL) AS queued,
         (q.parked_at IS NOT NULL) AS parked,
         (SELECT h.kind FROM reconcile_holds h WHERE h.user_id = u.id AND h.decision IS NULL) AS hold
    FROM idp_users u
    LEFT JOIN platform_accounts a ON a.user_id = u.id
    LEFT JOIN reconcile_queue q ON q.user_id = u.id`;

const toAdminUserRow = (r: AdminRow): AdminUserRow => ({
  id: r.id,
  userName: r.user_name,
  active: r.active,
  groups: r.groups,
  accountState: r.account_state,
  appliedAt: r.applied_at,
  queued: r.queued,
  parked: r.parked,
  hold: r.hold,
});

/** Users whose userName starts with `prefix` (all users without one), by userName. */
export async function searchUsers(
  db: Queryable,
  prefix: string | undefined,
  limit: number,
  offset: number,
): Promise<{ rows: AdminUserRow[]; hasNext: boolean }> {
  const rows: AdminRow[] = await db.query(
    `${ADMIN_SELECT} WHERE ($1::text IS NULL OR lower(u.user_name) LIKE $1) ORDER BY lower(u.user_name), u.id LIMIT $2 OFFSET $3`,
    [prefix ? likePrefix(prefix) : null, limit + 1, Math.max(0, offset)],
  );
  return { rows: rows.slice(0, limit).map(toAdminUserRow), hasNext: rows.length > limit };
}

export async function getUserRow(db: Queryable, userId: string): Promise<AdminUserRow | undefined> {
  if (!isUuid(userId)) return undefined;
  const rows: AdminRow[] = await db.query(`${ADMIN_SELECT} WHERE u.id = $1`, [userId]);
  return rows[0] && toAdminUserRow(rows[0]);
}

/** The user's name when the connector knows them: in the IdP tables, or by their platform account (a user the IdP deleted). */
export async function knownUserName(db: Queryable, userId: string): Promise<string | undefined> {
  if (!isUuid(userId)) return undefined;
  const rows: { user_name: string | null }[] = await db.query(
    `SELECT COALESCE((SELECT user_name FROM idp_users WHERE id = $1), (SELECT user_name FROM platform_accounts WHERE user_id = $1)) AS user_name`,
    [userId],
  );
  return rows[0]?.user_name ?? undefined;
}

// What the reconciler reads about IdP users: everything the mapping needs to compute the desired
// dashboard user, in one query per user (or per batch for full resyncs).

type IdpGroupRef = { id: string; displayName: string; externalId: string | null };

export type IdpUserForReconcile = {
  id: string;
  userName: string;
  active: boolean;
  givenName: string | null;
  familyName: string | null;
  displayName: string | null;
  department: string | null;
  /** Sorted by displayName, then id. */
  groups: IdpGroupRef[];
};

type ReconcileRow = {
  id: string;
  user_name: string;
  active: boolean;
  given_name: string | null;
  family_name: string | null;
  display_name: string | null;
  department: string | null;
  groups: IdpGroupRef[];
};

const RECONCILE_SELECT = `
  SELECT u.id, u.user_name, u.active, u.given_name, u.family_name, u.display_name, u.department,
         COALESCE((SELECT json_agg(json_build_object('id', g.id, 'displayName', g.display_name, 'externalId', g.external_id)
                                   ORDER BY g.display_name, g.id)
                     FROM idp_group_members m JOIN idp_groups g ON g.id = m.group_id
                    WHERE m.user_id = u.id), '[]'::json) AS groups
    FROM idp_users u`;

const toReconcileUser = (r: ReconcileRow): IdpUserForReconcile => ({
  id: r.id,
  userName: r.user_name,
  active: r.active,
  givenName: r.given_name,
  familyName: r.family_name,
  displayName: r.display_name,
  department: r.department,
  groups: r.groups,
});

/** The user with their groups; undefined when the IdP deleted the user (a deprovision). */
export async function getUserForReconcile(q: Queryable, userId: string): Promise<IdpUserForReconcile | undefined> {
  if (!isUuid(userId)) return undefined;
  const rows: ReconcileRow[] = await q.query(`${RECONCILE_SELECT} WHERE u.id = $1`, [userId]);
  return rows[0] && toReconcileUser(rows[0]);
}

/** Users in id order after `afterId` (exclusive; undefined to start), for batch re-derivation. */
export async function listUsersWithGroups(
  q: Queryable,
  afterId: string | undefined,
  limit: number,
): Promise<IdpUserForReconcile[]> {
  const rows: ReconcileRow[] = await q.query(
    `${RECONCILE_SELECT} WHERE ($1::uuid IS NULL OR u.id > $1::uuid) ORDER BY u.id LIMIT $2`,
    [afterId ?? null, limit],
  );
  return rows.map(toReconcileUser);
}

/** Ids of every IdP user in id order after `afterId`, for marking all users dirty in batches. */
export async function listIdpUserIds(q: Queryable, afterId: string | undefined, limit: number): Promise<string[]> {
  const rows: { id: string }[] = await q.query(
    `SELECT id FROM idp_users WHERE ($1::uuid IS NULL OR id > $1::uuid) ORDER BY id LIMIT $2`,
    [afterId ?? null, limit],
  );
  return rows.map((r) => r.id);
}

/** Ids of the members of the groups with these display names (case-insensitive), e.g. after a mapping change. */
export async function listUserIdsInGroupsNamed(q: Queryable, displayNames: string[]): Promise<string[]> {
  if (!displayNames.length) return [];
  const rows: { user_id: string }[] = await q.query(
    `SELECT DISTINCT m.user_id FROM idp_group_members m JOIN idp_groups g ON g.id = m.group_id
      WHERE lower(g.display_name) = ANY($1::text[]) ORDER BY m.user_id`,
    [displayNames.map((n) => n.toLowerCase())],
  );
  return rows.map((r) => r.user_id);
}

/**
 * The user id a userName (email, case-insensitive) refers to: the IdP's user, else the account
 * the connector still holds for a user the IdP deleted (whose next reconcile is a deprovision).
 */
export async function findUserIdByUserName(q: Queryable, userName: string): Promise<string | undefined> {
  const rows: { id: string }[] = await q.query(
    `SELECT id FROM idp_users WHERE lower(user_name) = lower($1)
     UNION ALL
     SELECT user_id FROM platform_accounts WHERE lower(user_name) = lower($1)
     LIMIT 1`,
    [userName],
  );
  return rows[0]?.id;
}
