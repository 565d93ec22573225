import type { Database, Queryable } from "../db/database.js";
import { NotFoundError } from "../errors.js";
import { markUsersDirty, markUsersDirtyEach } from "../db/reconcile/queueRepository.js";
import type { DirtyTrigger } from "../vocabulary/reconcile.js";
import {
  addGroupMembers,
  deleteIdpGroup,
  getIdpGroup,
  insertIdpGroup,
  listIdpGroups,
  lockIdpGroup,
  memberIdsOfGroup,
  membersOfGroups,
  patchGroupMembersMarked,
  removeGroupMembers,
  removeGroupMembersExcept,
  touchIdpGroup,
  unknownMembers,
  updateIdpGroup,
  type GroupMember,
  type MemberPatch,
  type StoredGroup,
} from "../db/idp/groupRepository.js";
import type { Page, StoredResource } from "../db/idp/paging.js";
import { inIdpTransaction, withIdpRetry } from "../db/idp/transaction.js";
import { log } from "../logging/logger.js";
import { parseFilter } from "./filter.js";
import { matchesFilter } from "./filterEval.js";
import { filterToSql } from "../db/idp/filterSql.js";
import { normalisePatchRequest, normaliseResource } from "./idpQuirks.js";
import { applyPatch, memberRefs, splitGroupPatch, type MemberRef, type MembershipChange } from "./patchApply.js";
import { groupColumns } from "./resources.js";
import { sortToSql } from "../db/idp/sortSql.js";
import type { ListQuery } from "./userCommands.js";
import { coerceResource } from "./schemas.js";
import { checkIfMatch, idpTrigger, resourceBody, type WriteContext } from "./writeContext.js";

/**
 * IdP group commands. Membership changes are row-level; the users whose membership changed are
 * marked dirty in the same transaction, and all members are marked when the group's displayName
 * or externalId changes (the mapping may match on either) or the group is deleted.
 *
 * Past ~300 lines by one: create, replace, patch and delete of a group share the membership diff
 * and the marking; split it when it grows.
 */

export type GroupWithMembers = { group: StoredResource; members: GroupMember[] | undefined };

const notFound = (id: string) => new NotFoundError(`Group ${id.slice(0, 64)} not found`);

/** The group's own attributes and, separately, the members named in the body (undefined: not named). */
function splitGroupBody(body: unknown): { resource: Record<string, unknown>; members: MemberRef[] | undefined } {
  const input = normaliseResource("Group", resourceBody(body));
  const membersKey = Object.keys(input).find((k) => k.toLowerCase() === "members");
  const members = membersKey === undefined ? undefined : memberRefs(input[membersKey]);
  if (membersKey !== undefined) delete input[membersKey];
  return { resource: coerceResource("Group", input), members };
}

// Member ids come from the client and could be anything, even an email: never log one whole.
const loggableId = (id: string) => (id.includes("@") ? `…${id.slice(id.indexOf("@"))}` : id).slice(0, 64);

function logUnknownMembers(groupId: string, unknown: string[]): void {
  if (unknown.length)
    log.warn("scim", "unknown group members skipped", {
      groupId,
      count: unknown.length,
      memberIds: unknown.slice(0, 20).map(loggableId),
    });
}

async function withMembers(manager: Queryable, group: StoredResource): Promise<GroupWithMembers> {
  return { group, members: (await membersOfGroups(manager, [group.id])).get(group.id) };
}

export async function createGroup(db: Database, body: unknown, context: WriteContext): Promise<GroupWithMembers> {
  const { resource, members } = splitGroupBody(body);
  const columns = groupColumns(resource);
  const result = await inIdpTransaction(db, async (manager) => {
    const group = await insertIdpGroup(manager, columns, resource);
    const { added, unknown } = await addGroupMembers(manager, group.id, members ?? []);
    logUnknownMembers(group.id, unknown);
    await markGroupMembers(manager, context, undefined, group, { added, removed: [] });
    return withMembers(manager, group);
  });
  log.info("scim", "group created", { groupId: result.group.id, members: result.members?.length ?? 0 });
  return result;
}

export async function getGroup(db: Database, id: string, includeMembers: boolean): Promise<GroupWithMembers> {
  const group = await getIdpGroup(db, id);
  if (!group) throw notFound(id);
  return { group, members: includeMembers ? (await membersOfGroups(db, [id])).get(id) : undefined };
}

export async function listGroups(
  db: Database,
  query: ListQuery,
  includeMembers: boolean,
): Promise<Page<GroupWithMembers>> {
  const where = query.filter === undefined ? undefined : filterToSql("Group", parseFilter(query.filter));
  const page = await listIdpGroups(
    db,
    where,
    query.startIndex,
    query.count,
    query.sort && sortToSql("Group", query.sort),
  );
  const members = includeMembers
    ? await membersOfGroups(
        db,
        page.items.map((g) => g.id),
      )
    : undefined;
  return { total: page.total, items: page.items.map((group) => ({ group, members: members?.get(group.id) })) };
}

const identityChanged = (before: StoredGroup, after: StoredGroup) =>
  before.displayName !== after.displayName || before.externalId !== after.externalId;

type MembershipDelta = { added: string[]; removed: string[] };

/** Applies membership changes in request order; returns the ids added and removed. */
async function changeMembership(
  manager: Queryable,
  groupId: string,
  changes: MembershipChange[],
): Promise<MembershipDelta> {
  const delta: MembershipDelta = { added: [], removed: [] };
  for (const change of changes) {
    if (change.kind === "add" || change.kind === "replace") {
      if (change.kind === "replace")
        delta.removed.push(
          ...(await removeGroupMembersExcept(
            manager,
            groupId,
            change.members.map((m) => m.id),
          )),
        );
      const { added, unknown } = await addGroupMembers(manager, groupId, change.members);
      logUnknownMembers(groupId, unknown);
      delta.added.push(...added);
    } else if (change.kind === "remove") {
      delta.removed.push(...(await removeGroupMembers(manager, groupId, change.ids)));
    } else if (change.kind === "removeAll") {
      delta.removed.push(...(await removeGroupMembersExcept(manager, groupId, [])));
    } else {
      const current = (await membersOfGroups(manager, [groupId])).get(groupId) ?? [];
      const doomed = current.filter((m) =>
        matchesFilter({ value: m.id, display: m.display, type: "User" }, change.filter),
      );
      delta.removed.push(
        ...(await removeGroupMembers(
          manager,
          groupId,
          doomed.map((m) => m.id),
        )),
      );
    }
  }
  return delta;
}

/**
 * Marks the users a group write touched, each with what happened to them, and the group's name
 * as it is in this transaction (the log must not look names up later: groups get renamed).
 * A rename (or externalId change) marks every other member too. One statement for all of them
 * (markUsersDirtyEach), so concurrent group writes lock the queue rows in one order.
 */
async function markGroupMembers(
  manager: Queryable,
  context: WriteContext,
  before: StoredGroup | undefined,
  after: StoredGroup,
  delta: MembershipDelta,
): Promise<void> {
  const resource = `Groups/${after.id}`;
  const group = { groupId: after.id, groupName: after.displayName };
  const marks: { userId: string; trigger: DirtyTrigger }[] = [];
  if (before && identityChanged(before, after)) {
    const changed = new Set([...delta.added, ...delta.removed]);
    const renamed = idpTrigger(context, resource, {
      what: "group-renamed",
      ...group,
      previousName: before.displayName,
    });
    for (const userId of await memberIdsOfGroup(manager, after.id))
      if (!changed.has(userId)) marks.push({ userId, trigger: renamed });
  }
  const added = idpTrigger(context, resource, { what: "added-to-group", ...group });
  const removed = idpTrigger(context, resource, { what: "removed-from-group", ...group });
  for (const userId of delta.added) marks.push({ userId, trigger: added });
  for (const userId of delta.removed) marks.push({ userId, trigger: removed });
  await markUsersDirtyEach(manager, marks);
}

export async function replaceGroup(
  db: Database,
  id: string,
  body: unknown,
  context: WriteContext,
): Promise<GroupWithMembers> {
  const { resource, members } = splitGroupBody(body);
  const columns = groupColumns(resource);
  return inIdpTransaction(db, async (manager) => {
    const before = await lockIdpGroup(manager, id);
    if (!before) throw notFound(id);
    checkIfMatch(context, before.version);
    const after = await updateIdpGroup(manager, id, columns, resource);
    // A PUT without `members` leaves membership alone: wiping it would deprovision everyone.
    const delta = members
      ? await changeMembership(manager, id, [{ kind: "replace", members }])
      : { added: [], removed: [] };
    await markGroupMembers(manager, context, before, after, delta);
    log.info("scim", "group replaced", {
      groupId: id,
      membersChanged: delta.added.length + delta.removed.length,
      renamed: identityChanged(before, after),
    });
    return withMembers(manager, after);
  });
}

/** Membership ops that all add listed members, or all remove listed ids, as one change; else undefined. */
function oneKindOfMemberChange(membership: MembershipChange[]): MemberPatch | undefined {
  type Add = Extract<MembershipChange, { kind: "add" }>;
  type Remove = Extract<MembershipChange, { kind: "remove" }>;
  if (!membership.length) return undefined;
  if (membership.every((c): c is Add => c.kind === "add"))
    return { kind: "add", members: membership.flatMap((c) => c.members) };
  if (membership.every((c): c is Remove => c.kind === "remove"))
    return { kind: "remove", ids: membership.flatMap((c) => c.ids) };
  return undefined;
}

/**
 * Okta's membership PATCH (one add or remove, no If-Match) in one statement; the same answer,
 * log lines and marks as the transaction below. Undefined when the statement backed off (a remove
 * that raced another write of the group): the caller runs the transaction.
 */
async function patchMembersAtOnce(
  db: Database,
  id: string,
  patch: MemberPatch,
  membership: MembershipChange[],
  context: WriteContext,
): Promise<StoredResource | undefined> {
  const groupId = id.toLowerCase(); // as PostgreSQL prints the uuid (isUuid admits upper case)
  const what = patch.kind === "add" ? "added-to-group" : "removed-from-group";
  // The statement puts in the group's name from the row it locks.
  const trigger = idpTrigger(context, `Groups/${groupId}`, { what, groupId, groupName: "" });
  const result = await withIdpRetry(() => patchGroupMembersMarked(db, id, patch, trigger));
  if (result.outcome === "missing") throw notFound(id);
  if (result.outcome === "stale") return undefined;
  for (const change of membership)
    if (change.kind === "add") logUnknownMembers(id, unknownMembers(change.members, result.known));
  log.info("scim", "group patched", { groupId: id, membersChanged: result.changed.length, renamed: false });
  return result.group;
}

export async function patchGroup(
  db: Database,
  id: string,
  body: unknown,
  context: WriteContext,
): Promise<StoredResource> {
  const { attributeOps, membership } = splitGroupPatch(normalisePatchRequest("Group", body));
  const memberPatch = attributeOps.length || context.ifMatch ? undefined : oneKindOfMemberChange(membership);
  const patched = memberPatch && (await patchMembersAtOnce(db, id, memberPatch, membership, context));
  if (patched) return patched;
  return inIdpTransaction(db, async (manager) => {
    let before: StoredGroup | undefined;
    let after: StoredGroup | undefined;
    if (attributeOps.length) {
      before = await lockIdpGroup(manager, id);
      if (!before) throw notFound(id);
      checkIfMatch(context, before.version);
      const resource = coerceResource("Group", applyPatch("Group", before.resource, attributeOps));
      after = await updateIdpGroup(manager, id, groupColumns(resource), resource);
    } else {
      // Membership only (the common case): bump the version first, which also takes the lock.
      after = await touchIdpGroup(manager, id);
      if (!after) throw notFound(id);
      before = after;
      checkIfMatch(context, after.version - 1);
    }
    const delta = await changeMembership(manager, id, membership);
    await markGroupMembers(manager, context, before, after, delta);
    log.info("scim", "group patched", {
      groupId: id,
      membersChanged: delta.added.length + delta.removed.length,
      renamed: identityChanged(before, after),
    });
    return after;
  });
}

export async function deleteGroup(db: Database, id: string, context: WriteContext): Promise<void> {
  await inIdpTransaction(db, async (manager) => {
    const current = await lockIdpGroup(manager, id);
    if (!current) throw notFound(id);
    checkIfMatch(context, current.version);
    const members = (await deleteIdpGroup(manager, id)) ?? [];
    await markUsersDirty(
      manager,
      members,
      idpTrigger(context, `Groups/${id}`, { what: "group-deleted", groupId: id, groupName: current.displayName }),
    );
  });
  log.info("scim", "group deleted", { groupId: id });
}
