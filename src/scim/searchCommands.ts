import type { Database } from "../db/database.js";
import { membersOfGroups, type GroupMember } from "../db/idp/groupRepository.js";
import { searchIdpResources } from "../db/idp/searchRepository.js";
import type { Page, StoredResource } from "../db/idp/paging.js";
import { BadRequestError } from "../errors.js";
import { parseFilter, type Filter } from "./filter.js";
import { filterToSqlAcross, type SqlCondition } from "../db/idp/filterSql.js";
import type { ResourceKind } from "./schemas.js";
import { sortAcrossToSql } from "../db/idp/sortSql.js";
import type { ListQuery } from "./userCommands.js";

/**
 * A search at the service root (POST /.search, RFC 7644 3.4.3) spans Users and Groups. The filter
 * applies to both: an attribute one type lacks is unassigned there (`userName sw "a"` matches no
 * group), and only an attribute that neither type has is a 400.
 */

export type SearchHit =
  | { kind: "User"; record: StoredResource }
  | { kind: "Group"; record: StoredResource; members: GroupMember[] | undefined };

function conditions(filter: Filter | undefined): Record<ResourceKind, SqlCondition | undefined> {
  if (!filter) return { User: undefined, Group: undefined };
  const users = filterToSqlAcross("User", filter, 0);
  const groups = filterToSqlAcross("Group", filter, users.params.length);
  const unknown = [...users.unknownPaths].find((path) => groups.unknownPaths.has(path));
  if (unknown) throw new BadRequestError(`Unknown attribute '${unknown.slice(0, 100)}' in filter`, "invalidFilter");
  return { User: users, Group: groups };
}

export async function searchResources(
  db: Database,
  query: ListQuery,
  includeMembers: boolean,
): Promise<Page<SearchHit>> {
  const where = conditions(query.filter === undefined ? undefined : parseFilter(query.filter));
  const sort = query.sort && sortAcrossToSql(query.sort);
  const page = await searchIdpResources(
    db,
    { User: { where: where.User, sort: sort?.User }, Group: { where: where.Group, sort: sort?.Group } },
    query.startIndex,
    query.count,
  );
  const groupIds = page.items.filter((r) => r.kind === "Group").map((r) => r.id);
  const members = includeMembers && groupIds.length ? await membersOfGroups(db, groupIds) : undefined;
  const items = page.items.map(({ kind, ...record }): SearchHit =>
    kind === "User" ? { kind, record } : { kind, record, members: members?.get(record.id) },
  );
  return { total: page.total, items };
}
