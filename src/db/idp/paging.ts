import type { Queryable } from "../database.js";
import type { SqlCondition } from "./filterSql.js";
import { readQuery } from "./readPath.js";
import type { SqlSort } from "./sortSql.js";

/**
 * The stored shape of an IdP user or group (the canonical SCIM resource and its version), and the
 * offset paging both lists share (SCIM's startIndex/count, the total in the same statement).
 */

export type StoredResource = {
  id: string;
  resource: Record<string, unknown>;
  version: number;
  createdAt: Date;
  updatedAt: Date;
};

/** A stored row as PostgreSQL returns it. */
export type Row = {
  id: string;
  resource: Record<string, unknown>;
  version: number;
  created_at: Date;
  updated_at: Date;
};

/** The columns of a stored row, for RETURNING. */
export const RETURNING = `id, resource, version, created_at, updated_at`;

export const toStored = (r: Row): StoredResource => ({
  id: r.id,
  resource: r.resource,
  version: r.version,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export type Page<T> = { total: number; items: T[] };

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
