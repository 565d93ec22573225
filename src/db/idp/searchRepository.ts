import type { SqlCondition } from "./filterSql.js";
import type { SqlSort } from "./sortSql.js";
import type { ResourceKind } from "../../scim/schemas.js";
import { readQuery } from "./readPath.js";
import { toStored, type Page, type StoredResource } from "./paging.js";
import type { Queryable } from "../database.js";

/**
 * A search across Users and Groups (POST /.search, RFC 7644 3.4.3): one UNION ALL of both tables,
 * sorted and paged in PostgreSQL. A resource type that is left out (its filter names an attribute
 * it does not have) contributes no rows.
 */

export type KindQuery = { where: SqlCondition | undefined; sort: SqlSort | undefined };
export type SearchedResource = StoredResource & { kind: ResourceKind };

type Row = {
  kind: ResourceKind;
  id: string;
  resource: Record<string, unknown>;
  version: number;
  created_at: Date;
  updated_at: Date;
  total: number;
};

const TABLES: Record<ResourceKind, { table: string; alias: string }> = {
  User: { table: "idp_users u", alias: "u" },
  Group: { table: "idp_groups g", alias: "g" },
};

function selectOf(kind: ResourceKind, query: KindQuery): string {
  const { table, alias } = TABLES[kind];
  // Both branches carry a sort key of the same type; a type without the attribute sorts as unassigned.
  const sortKey = query.sort ? `, ${query.sort.key ?? "NULL"}::${query.sort.type} AS sort_key` : "";
  return `SELECT '${kind}'::text AS kind, ${alias}.id, ${alias}.resource, ${alias}.version, ${alias}.created_at, ${alias}.updated_at${sortKey}
            FROM ${table} ${query.where ? `WHERE ${query.where.sql}` : ""}`;
}

/** One page of the users and groups matching their conditions (parameters numbered across both, users first). */
export async function searchIdpResources(
  q: Queryable,
  queries: Partial<Record<ResourceKind, KindQuery>>,
  startIndex: number,
  count: number,
): Promise<Page<SearchedResource>> {
  const kinds = (["User", "Group"] as const).filter((k) => queries[k]);
  if (!kinds.length) return { total: 0, items: [] };
  const union = kinds.map((k) => selectOf(k, queries[k]!)).join(" UNION ALL ");
  const params = kinds.flatMap((k) => queries[k]!.where?.params ?? []);
  const countSql = `SELECT count(*)::int AS total FROM (${union}) r`;
  if (count === 0)
    return { total: (await readQuery<{ total: number }>(q, countSql, params))[0]?.total ?? 0, items: [] };
  const sort = queries[kinds[0]!]!.sort;
  const order = sort ? `r.sort_key ${sort.descending ? "DESC" : "ASC"}, r.created_at, r.id` : "r.created_at, r.id";
  const n = params.length;
  const rows = await readQuery<Row>(
    q,
    `SELECT r.kind, r.id, r.resource, r.version, r.created_at, r.updated_at, count(*) OVER ()::int AS total
       FROM (${union}) r ORDER BY ${order} LIMIT $${n + 1} OFFSET $${n + 2}`,
    [...params, count, startIndex - 1],
  );
  if (rows.length) return { total: rows[0]!.total, items: rows.map((r) => ({ ...toStored(r), kind: r.kind })) };
  if (startIndex <= 1) return { total: 0, items: [] };
  return { total: (await readQuery<{ total: number }>(q, countSql, params))[0]?.total ?? 0, items: [] };
}
