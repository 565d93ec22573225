import type { SqlCondition } from "./filterSql.js";
import type { SqlSort } from "./sortSql.js";
import { readQuery } from "./readPath.js";
import { listPage, toStored, type Page, type StoredResource } from "./paging.js";
import type { Database, Queryable } from "../database.js";
import { markDirtyCtes, markDirtyParams } from "../reconcile/queueRepository.js";
import type { DirtyTrigger } from "../../vocabulary/reconcile.js";
import { isUuid } from "../../ids.js";

/**
 * IdP groups and their membership. The group's own attributes are a jsonb resource; membership
 * is one row per (group, user), changed with row-level INSERT/DELETE so that concurrent member
 * PATCHes never overwrite each other. Every write returns the user ids whose membership really
 * changed, which is what the caller marks dirty.
 */

export type GroupColumns = { displayName: string; externalId: string | null };
export type GroupMember = { id: string; display: string | null };
/** A member as a request names it: an id that may or may not be a user's. */
type MemberRef = { id: string; display?: string };

type Row = {
  id: string;
  resource: Record<string, unknown>;
  version: number;
  created_at: Date;
  updated_at: Date;
  display_name: string;
  external_id: string | null;
};
const RETURNING = `id, resource, version, created_at, updated_at, display_name, external_id`;

export type StoredGroup = StoredResource & GroupColumns;
const toGroup = (r: Row): StoredGroup => ({ ...toStored(r), displayName: r.display_name, externalId: r.external_id });

export async function insertIdpGroup(
  q: Queryable,
  columns: GroupColumns,
  resource: Record<string, unknown>,
): Promise<StoredGroup> {
  const rows: Row[] = await q.query(
    `INSERT INTO idp_groups (display_name, external_id, resource) VALUES ($1, $2, $3) RETURNING ${RETURNING}`,
    [columns.displayName, columns.externalId, resource],
  );
  return toGroup(rows[0]!);
}

export async function getIdpGroup(q: Queryable, id: string): Promise<StoredGroup | undefined> {
  if (!isUuid(id)) return undefined;
  const rows = await readQuery<Row>(q, `SELECT ${RETURNING} FROM idp_groups WHERE id = $1`, [id]);
  return rows[0] && toGroup(rows[0]);
}

/**
 * Locks the group row for the rest of the transaction. Every group write takes this lock first,
 * so writes to one group serialise (and cannot deadlock on it) while other groups proceed.
 */
export async function lockIdpGroup(q: Queryable, id: string): Promise<StoredGroup | undefined> {
  if (!isUuid(id)) return undefined;
  const rows: Row[] = await q.query(`SELECT ${RETURNING} FROM idp_groups WHERE id = $1 FOR NO KEY UPDATE`, [id]);
  return rows[0] && toGroup(rows[0]);
}

export async function updateIdpGroup(
  q: Queryable,
  id: string,
  columns: GroupColumns,
  resource: Record<string, unknown>,
): Promise<StoredGroup> {
  const rows = await q.query<Row>(
    `UPDATE idp_groups SET display_name = $2, external_id = $3, resource = $4, version = version + 1, updated_at = now()
      WHERE id = $1 RETURNING ${RETURNING}`,
    [id, columns.displayName, columns.externalId, resource],
  );
  return toGroup(rows[0]!);
}

/**
 * A membership-only change still moves the group's version and lastModified. Doing it first also
 * takes the row lock (like lockIdpGroup) in one round trip; undefined when there is no group.
 */
export async function touchIdpGroup(q: Queryable, id: string): Promise<StoredGroup | undefined> {
  if (!isUuid(id)) return undefined;
  const rows = await q.query<Row>(
    `UPDATE idp_groups SET version = version + 1, updated_at = now() WHERE id = $1 RETURNING ${RETURNING}`,
    [id],
  );
  return rows[0] && toGroup(rows[0]);
}

/** Deletes the group; returns the ids of the users who were its members, or undefined if there was no group. */
export async function deleteIdpGroup(q: Queryable, id: string): Promise<string[] | undefined> {
  if (!isUuid(id)) return undefined;
  const members = await q.query<{ user_id: string }>(
    `DELETE FROM idp_group_members WHERE group_id = $1 RETURNING user_id`,
    [id],
  );
  const rows = await q.query(`DELETE FROM idp_groups WHERE id = $1 RETURNING id`, [id]);
  return rows.length ? members.map((m) => m.user_id) : undefined;
}

export async function listIdpGroups(
  q: Queryable,
  where: SqlCondition | undefined,
  startIndex: number,
  count: number,
  sort?: SqlSort,
): Promise<Page<StoredResource>> {
  return listPage(q, "idp_groups g", "g", where, startIndex, count, sort);
}

/** Members of each group, oldest membership first. */
export async function membersOfGroups(q: Queryable, groupIds: string[]): Promise<Map<string, GroupMember[]>> {
  const byGroup = new Map<string, GroupMember[]>(groupIds.map((id) => [id, []]));
  if (!groupIds.length) return byGroup;
  const rows = await readQuery<{ group_id: string; user_id: string; display: string | null }>(
    q,
    `SELECT m.group_id, m.user_id, COALESCE(m.display, u.display_name, u.user_name) AS display
       FROM idp_group_members m JOIN idp_users u ON u.id = m.user_id
      WHERE m.group_id = ANY($1::uuid[])
      ORDER BY m.added_at, m.user_id`,
    [groupIds],
  );
  for (const r of rows) byGroup.get(r.group_id)?.push({ id: r.user_id, display: r.display });
  return byGroup;
}

export async function memberIdsOfGroup(q: Queryable, groupId: string): Promise<string[]> {
  const rows: { user_id: string }[] = await q.query(`SELECT user_id FROM idp_group_members WHERE group_id = $1`, [
    groupId,
  ]);
  return rows.map((r) => r.user_id);
}

export type AddResult = { added: string[]; unknown: string[] };

/** The distinct member ids that can be users (lower case, each with its first display), and the ones that cannot. */
function wantedMembers(members: MemberRef[]): { wanted: Map<string, string | null>; invalid: string[] } {
  const wanted = new Map<string, string | null>();
  const invalid: string[] = [];
  for (const m of members) {
    if (!isUuid(m.id)) invalid.push(m.id);
    else if (!wanted.has(m.id.toLowerCase())) wanted.set(m.id.toLowerCase(), m.display ?? null);
  }
  return { wanted, invalid };
}

/** The ids of `members` that name no user, given the ids (lower case) found as users. */
export function unknownMembers(members: MemberRef[], known: ReadonlySet<string>): string[] {
  const { wanted, invalid } = wantedMembers(members);
  return [...invalid, ...[...wanted.keys()].filter((id) => !known.has(id))];
}

/** Adds members that exist as users; ids that are not users are reported back, not inserted. */
export async function addGroupMembers(q: Queryable, groupId: string, members: MemberRef[]): Promise<AddResult> {
  const { wanted } = wantedMembers(members);
  if (!wanted.size) return { added: [], unknown: unknownMembers(members, new Set()) };
  const rows: { known: string[] | null; added: string[] | null }[] = await q.query(
    `WITH wanted AS (SELECT * FROM unnest($2::uuid[], $3::text[]) AS w (id, display)),
          known AS (SELECT w.id, w.display FROM wanted w JOIN idp_users u ON u.id = w.id),
          inserted AS (
            INSERT INTO idp_group_members (group_id, user_id, display)
            SELECT $1, id, display FROM known ORDER BY id
            ON CONFLICT (group_id, user_id) DO NOTHING
            RETURNING user_id)
     SELECT (SELECT array_agg(id::text) FROM known) AS known, (SELECT array_agg(user_id::text) FROM inserted) AS added`,
    [groupId, [...wanted.keys()], [...wanted.values()]],
  );
  return { added: rows[0]?.added ?? [], unknown: unknownMembers(members, new Set(rows[0]?.known ?? [])) };
}

/** Removes the listed members; returns the ids actually removed. */
export async function removeGroupMembers(q: Queryable, groupId: string, userIds: string[]): Promise<string[]> {
  const ids = [...new Set(userIds.filter(isUuid).map((id) => id.toLowerCase()))];
  if (!ids.length) return [];
  const rows = await q.query<{ user_id: string }>(
    `DELETE FROM idp_group_members WHERE group_id = $1 AND user_id = ANY($2::uuid[]) RETURNING user_id`,
    [groupId, ids],
  );
  return rows.map((r) => r.user_id);
}

/** Removes every member except `keep`; returns the ids removed. */
export async function removeGroupMembersExcept(q: Queryable, groupId: string, keep: string[]): Promise<string[]> {
  const ids = [...new Set(keep.filter(isUuid).map((id) => id.toLowerCase()))];
  const rows = await q.query<{ user_id: string }>(
    `DELETE FROM idp_group_members WHERE group_id = $1 AND NOT (user_id = ANY($2::uuid[])) RETURNING user_id`,
    [groupId, ids],
  );
  return rows.map((r) => r.user_id);
}

/**
 * One statement for a membership-only PATCH (the IdP's most frequent write): bump the group's
 * version (which takes its row lock), add or remove the members only if the group was found (the
 * member CTE reads `touched`, so it runs after the lock), and mark exactly the users changed.
 *
 * The users are locked (KEY SHARE, what the foreign key check takes) before the marks: that check
 * fires at the end of the statement, after the reconcile_queue rows, which against a user write
 * (user row, then its queue row) is a deadlock. The transaction takes them in this order too.
 *
 * A remove also requires the version its snapshot saw: the snapshot is taken before the lock wait,
 * so a member added by a write that held the lock meanwhile would be invisible to the DELETE. When
 * that happens nothing is written and the caller runs the transaction instead (`stale`).
 */
function memberPatchSql(kind: "add" | "remove"): string {
  const touched =
    kind === "add"
      ? `touched AS (
     UPDATE idp_groups SET version = version + 1, updated_at = now() WHERE id = $1 RETURNING ${RETURNING}),`
      : `seen AS (SELECT version FROM idp_groups WHERE id = $1),
   touched AS (
     UPDATE idp_groups SET version = version + 1, updated_at = now()
      WHERE id = $1 AND version = (SELECT version FROM seen) RETURNING ${RETURNING}),`;
  const changed =
    kind === "add"
      ? `wanted AS (SELECT * FROM unnest($2::uuid[], $3::text[]) AS w (id, display)),
   known AS (SELECT w.id, w.display FROM wanted w JOIN idp_users u ON u.id = w.id FOR KEY SHARE OF u),
   changed AS (
     INSERT INTO idp_group_members (group_id, user_id, display)
     SELECT $1, id, display FROM known WHERE EXISTS (SELECT 1 FROM touched) ORDER BY id
     ON CONFLICT (group_id, user_id) DO NOTHING
     RETURNING user_id),`
      : `changed AS (
     DELETE FROM idp_group_members
      WHERE group_id = $1 AND user_id = ANY($2::uuid[]) AND EXISTS (SELECT 1 FROM touched)
     RETURNING user_id),`;
  const first = kind === "add" ? 4 : 3;
  // The group's name goes into the trigger as this statement finds it (the log must not look it up later).
  const trigger = `(SELECT jsonb_set($${first}::jsonb, '{change,groupName}', to_jsonb(display_name)) FROM touched)`;
  return `
  WITH ${touched}
   ${changed}
   ${markDirtyCtes("ARRAY(SELECT user_id FROM changed)", trigger, `$${first + 1}`)}
  SELECT t.*, ARRAY(SELECT user_id::text FROM changed) AS changed,
         ${kind === "add" ? "ARRAY(SELECT id::text FROM known)" : "NULL::text[]"} AS known,
         ${kind === "add" ? "false" : "EXISTS (SELECT 1 FROM seen)"} AS seen
    FROM (SELECT) AS one LEFT JOIN touched t ON true LEFT JOIN notified ON true`;
}
const ADD_MEMBERS_MARKED = memberPatchSql("add");
const REMOVE_MEMBERS_MARKED = memberPatchSql("remove");

export type MemberPatch = { kind: "add"; members: MemberRef[] } | { kind: "remove"; ids: string[] };
export type MemberPatchResult =
  | { outcome: "patched"; group: StoredGroup; changed: string[]; known: ReadonlySet<string> }
  | { outcome: "missing" }
  | { outcome: "stale" };

/**
 * Applies `patch` to the group's members and marks the users added or removed with `trigger`
 * (its `change.groupName` is set from the group row), in one statement and one round trip.
 * `known`: the ids added that name users (see unknownMembers); remove ids that are not UUIDs are ignored.
 */
export async function patchGroupMembersMarked(
  db: Database,
  groupId: string,
  patch: MemberPatch,
  trigger: DirtyTrigger,
): Promise<MemberPatchResult> {
  if (!isUuid(groupId)) return { outcome: "missing" };
  type Result = Row & { changed: string[]; known: string[] | null; seen: boolean };
  let rows: Result[];
  if (patch.kind === "add") {
    const { wanted } = wantedMembers(patch.members);
    rows = await db.prepared<Result>("idp_add_group_members_marked", ADD_MEMBERS_MARKED, [
      groupId,
      [...wanted.keys()],
      [...wanted.values()],
      ...markDirtyParams(trigger),
    ]);
  } else {
    const ids = [...new Set(patch.ids.filter(isUuid).map((id) => id.toLowerCase()))];
    rows = await db.prepared<Result>("idp_remove_group_members_marked", REMOVE_MEMBERS_MARKED, [
      groupId,
      ids,
      ...markDirtyParams(trigger),
    ]);
  }
  const row = rows[0]!;
  if (row.id === null) return { outcome: row.seen ? "stale" : "missing" };
  return { outcome: "patched", group: toGroup(row), changed: row.changed, known: new Set(row.known) };
}
