import { constraintName, sqlState, UniqueViolationError } from "../errors.js";
import type { SqlCondition } from "../scim/filterSql.js";
import type { SqlSort } from "../scim/sortSql.js";
import type { Queryable } from "./database.js";
import { readQuery } from "./idpReadPath.js";

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


const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Ids are UUIDs; anything else cannot exist, and must not reach a uuid parameter (SQLSTATE 22P02). */
export const isResourceId = (id: string) => UUID.test(id);

function uniqueness(error: unknown): never {
  if (sqlState(error) === "23505") throw new UniqueViolationError("A user with this userName already exists", constraintName(error));
  throw error;
}

function columnParams(c: IdpUserColumns): unknown[] {
  return [c.userName, c.externalId, c.active, c.displayName, c.givenName, c.familyName, c.department];
}

export async function insertIdpUser(q: Queryable, columns: IdpUserColumns, resource: Record<string, unknown>): Promise<StoredResource> {
  try {
    const rows: Row[] = await q.query(
      `INSERT INTO idp_users (user_name, external_id, active, display_name, given_name, family_name, department, resource)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${RETURNING}`,
      [...columnParams(columns), resource],
    );
    return toStored(rows[0]!);
  } catch (error) {
    uniqueness(error);
  }
}

export async function getIdpUser(q: Queryable, id: string): Promise<StoredResource | undefined> {
  if (!isResourceId(id)) return undefined;
  const rows = await readQuery<Row>(q, `SELECT ${RETURNING} FROM idp_users WHERE id = $1`, [id]);
  return rows[0] && toStored(rows[0]);
}

/** The user, row-locked until the transaction ends (read-modify-write of a PATCH). */
export async function lockIdpUser(q: Queryable, id: string): Promise<StoredResource | undefined> {
  if (!isResourceId(id)) return undefined;
  const rows: Row[] = await q.query(`SELECT ${RETURNING} FROM idp_users WHERE id = $1 FOR UPDATE`, [id]);
  return rows[0] && toStored(rows[0]);
}

/** Replaces the stored resource; undefined when the user does not exist (or `expectedVersion` differs). */
export async function updateIdpUser(
  q: Queryable,
  id: string,
  columns: IdpUserColumns,
  resource: Record<string, unknown>,
): Promise<StoredResource | undefined> {
  if (!isResourceId(id)) return undefined;
  try {
    const rows = await q.query<Row>(
      `UPDATE idp_users SET user_name = $2, external_id = $3, active = $4, display_name = $5, given_name = $6,
              family_name = $7, department = $8, resource = $9, version = version + 1, updated_at = now()
        WHERE id = $1 RETURNING ${RETURNING}`,
      [id, ...columnParams(columns), resource],
    );
    return rows[0] && toStored(rows[0]);
  } catch (error) {
    uniqueness(error);
  }
}

/** Deletes the user (its memberships go with it); false when there was none. */
export async function deleteIdpUser(q: Queryable, id: string): Promise<boolean> {
  if (!isResourceId(id)) return false;
  const rows = await q.query(`DELETE FROM idp_users WHERE id = $1 RETURNING id`, [id]);
  return rows.length > 0;
}

export type Page<T> = { total: number; items: T[] };

/** One page of users matching `where` (parameters from $1), by `sort` or oldest first; startIndex is 1-based. */
export async function listIdpUsers(q: Queryable, where: SqlCondition | undefined, startIndex: number, count: number, sort?: SqlSort): Promise<Page<StoredResource>> {
  return listPage(q, "idp_users u", "u", where, startIndex, count, sort);
}

/** ORDER BY for a page: the sort key first when there is one, then age and id so pages never overlap. */
export function orderBy(alias: string, sort: SqlSort | undefined): string {
  const stable = `${alias}.created_at, ${alias}.id`;
  return sort?.key ? `${sort.key} ${sort.descending ? "DESC" : "ASC"}, ${stable}` : stable;
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
    const rows = await readQuery<{ total: number }>(q, `SELECT count(*)::int AS total FROM ${table} ${condition}`, params);
    return { total: rows[0]?.total ?? 0, items: [] };
  }
  const n = params.length;
  const rows = await readQuery<Row & { total: number }>(
    q,
    `SELECT ${alias}.id, ${alias}.resource, ${alias}.version, ${alias}.created_at, ${alias}.updated_at, count(*) OVER ()::int AS total
       FROM ${table} ${condition}
      ORDER BY ${orderBy(alias, sort)}
      LIMIT $${n + 1} OFFSET $${n + 2}`,
    [...params, count, startIndex - 1],
  );
  if (rows.length) return { total: rows[0]!.total, items: rows.map(toStored) };
  if (startIndex <= 1) return { total: 0, items: [] };
  // Past the last page: the window count has no row to ride on, so count separately.
  const totals = await readQuery<{ total: number }>(q, `SELECT count(*)::int AS total FROM ${table} ${condition}`, params);
  return { total: totals[0]?.total ?? 0, items: [] };
}
