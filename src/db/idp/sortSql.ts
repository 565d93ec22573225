import { BadRequestError } from "../../errors.js";
import { resolveAttribute, type ResourceKind } from "../../scimAttributes.js";

/**
 * `sortBy` / `sortOrder` (RFC 7644 3.4.2.3) → the ORDER BY key over the indexed columns of
 * `idp_users u` or `idp_groups g`, so that sorting and paging both happen in PostgreSQL. Only the
 * attributes below sort; the expressions are fixed strings, never built from client input.
 * Strings that are not caseExact sort case-insensitively (lower(), like the indexes). Unassigned
 * values sort last in ascending order and first in descending order (PostgreSQL's NULLS default).
 */

export type SortOrder = "ascending" | "descending";
export type SortRequest = { sortBy: string; sortOrder: SortOrder };
/** `key` is a SQL expression of type `type`, or undefined when this resource type lacks the attribute. */
export type SqlSort = { key: string | undefined; type: "text" | "timestamptz"; descending: boolean };

type SortKey = { user?: string; group?: string; type: SqlSort["type"] };

const SORT_KEYS: Record<string, SortKey> = {
  username: { user: "lower(u.user_name)", type: "text" },
  displayname: { user: "lower(u.display_name)", group: "lower(g.display_name)", type: "text" },
  externalid: { user: "u.external_id", group: "g.external_id", type: "text" },
  "meta.created": { user: "u.created_at", group: "g.created_at", type: "timestamptz" },
  "meta.lastmodified": { user: "u.updated_at", group: "g.updated_at", type: "timestamptz" },
};

const SORTABLE_ATTRIBUTES = ["userName", "displayName", "externalId", "meta.created", "meta.lastModified"];

/** The canonical lower-case name of `sortBy` under either resource type (`urn:...:User:userName` → `username`). */
function canonicalName(sortBy: string): string {
  for (const kind of ["User", "Group"] as const) {
    const resolved = resolveAttribute(kind, sortBy.trim());
    if (resolved && !resolved.extension)
      return `${resolved.attribute.name}${resolved.sub ? `.${resolved.sub.name}` : ""}`.toLowerCase();
  }
  return sortBy.trim().toLowerCase();
}

function sortKeyOf(sortBy: string): SortKey {
  const key = SORT_KEYS[canonicalName(sortBy)];
  if (!key)
    throw new BadRequestError(
      `Cannot sort by '${sortBy.slice(0, 100)}': sortBy must be one of ${SORTABLE_ATTRIBUTES.join(", ")}`,
      "invalidValue",
    );
  return key;
}

/** The sort for one resource type; a 400 when that type cannot sort by `sortBy`. */
export function sortToSql(kind: ResourceKind, sort: SortRequest): SqlSort {
  const key = sortKeyOf(sort.sortBy);
  const expression = kind === "User" ? key.user : key.group;
  if (!expression)
    throw new BadRequestError(`${kind}s have no '${sort.sortBy.slice(0, 100)}' to sort by`, "invalidValue");
  return { key: expression, type: key.type, descending: sort.sortOrder === "descending" };
}

/** The sort for a search across Users and Groups: a type without the attribute sorts as unassigned. */
export function sortAcrossToSql(sort: SortRequest): Record<ResourceKind, SqlSort> {
  const key = sortKeyOf(sort.sortBy);
  const descending = sort.sortOrder === "descending";
  return { User: { key: key.user, type: key.type, descending }, Group: { key: key.group, type: key.type, descending } };
}
