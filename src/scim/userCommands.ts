import type { Database } from "../db/database.js";
import { NotFoundError } from "../errors.js";
import { markUsersDirty } from "../db/reconcileQueueRepository.js";
import {
  deleteIdpUser,
  getIdpUser,
  insertIdpUserMarked,
  listIdpUsers,
  lockIdpUser,
  replaceIdpUserMarked,
  updateIdpUserIfVersionMarked,
  updateIdpUserMarked,
} from "../db/idpUserRepository.js";
import { type Page, type StoredResource } from "../db/idpPaging.js";
import { inIdpTransaction, withIdpRetry } from "../db/idpTransaction.js";
import { log } from "../logging/logger.js";
import { MAX_FILTER_LENGTH, parseFilter } from "./filter.js";
import { filterToSql, type SqlCondition } from "../db/filterSql.js";
import { normalisePatchRequest, normaliseResource } from "./idpQuirks.js";
import { applyPatch } from "./patchApply.js";
import { userColumns } from "./resources.js";
import { sortToSql, type SortRequest } from "../db/sortSql.js";
import { coerceResource } from "./schemas.js";
import { checkIfMatch, idpTrigger, resourceBody, userChange, type WriteContext } from "./writeContext.js";
import { assignmentsChange, checkAssignments } from "./assignments.js";
import { EMPTY_CATALOGUE, type Catalogue } from "../mapping/catalogue.js";

/** The catalogue a user's roles[] and entitlements[] are checked against (read only when a write carries some). */
type CatalogueSource = () => Promise<Catalogue>;
const NO_CATALOGUE: CatalogueSource = () => Promise.resolve(EMPTY_CATALOGUE);

/**
 * IdP user commands. Each write stores the user and marks it dirty for the reconciler in the
 * same statement (a create) or transaction, so the mark exists exactly when the change does.
 */

/** A list or search: filter, page and sort (RFC 7644 3.4.2), already validated. */
export type ListQuery = { filter?: string; startIndex: number; count: number; sort?: SortRequest };

const notFound = (id: string) => new NotFoundError(`User ${id.slice(0, 64)} not found`);

function toStoredUser(body: unknown) {
  const resource = coerceResource("User", normaliseResource("User", resourceBody(body)));
  return { resource, columns: userColumns(resource) };
}

export async function createUser(
  db: Database,
  body: unknown,
  context: WriteContext,
  catalogue: CatalogueSource = NO_CATALOGUE,
): Promise<StoredResource> {
  const { resource, columns } = toStoredUser(body);
  await checkAssignments(resource, undefined, catalogue);
  const stored = await withIdpRetry(() =>
    insertIdpUserMarked(db, columns, resource, (id) =>
      idpTrigger(context, `Users/${id}`, userChange(undefined, columns.active)),
    ),
  );
  log.info("scim", "user created", { userId: stored.id, active: columns.active });
  return stored;
}

export async function getUser(db: Database, id: string): Promise<StoredResource> {
  const user = await getIdpUser(db, id);
  if (!user) throw notFound(id);
  return user;
}

/**
 * The filter Okta and Entra send before every write, `userName eq "<value>"` as they spell it, is
 * compiled once: the condition filterToSql gives it, the value its one parameter (and the same
 * string each time, so the statement built on it is found by a hash V8 has already computed). A
 * value with an escape or a control character, a longer filter, and every other filter go through
 * the tokenizer and parser. test/scim/filter.unit.test.ts holds the two to the same answers.
 */
const USER_NAME_EQ = /^userName eq "([^"\\\u0000-\u001f]*)"$/;
const USER_NAME_EQ_SQL = filterToSql("User", parseFilter('userName eq ""')).sql;

export function userFilterSql(filter: string): SqlCondition {
  const match = filter.length <= MAX_FILTER_LENGTH ? USER_NAME_EQ.exec(filter) : null;
  return match ? { sql: USER_NAME_EQ_SQL, params: [match[1]] } : filterToSql("User", parseFilter(filter));
}

export function listUsers(db: Database, query: ListQuery): Promise<Page<StoredResource>> {
  const where = query.filter === undefined ? undefined : userFilterSql(query.filter);
  return listIdpUsers(db, where, query.startIndex, query.count, query.sort && sortToSql("User", query.sort));
}

export async function replaceUser(
  db: Database,
  id: string,
  body: unknown,
  context: WriteContext,
  catalogue: CatalogueSource = NO_CATALOGUE,
): Promise<StoredResource> {
  const { resource, columns } = toStoredUser(body);
  await checkAssignments(resource, undefined, catalogue);
  const trigger = (wasActive: boolean) => idpTrigger(context, `Users/${id}`, userChange(wasActive, columns.active));
  // Without If-Match only the change's name depends on the current row: one statement locks, replaces and marks.
  const stored = context.ifMatch
    ? await inIdpTransaction(db, async (manager) => {
        const current = await lockIdpUser(manager, id);
        if (!current) throw notFound(id);
        checkIfMatch(context, current.version);
        return updateIdpUserMarked(manager, id, columns, resource, trigger(current.resource.active !== false));
      })
    : await withIdpRetry(() => replaceIdpUserMarked(db, id, columns, resource, trigger));
  if (!stored) throw notFound(id);
  log.info("scim", "user replaced", { userId: id, active: columns.active });
  return stored;
}

/** Optimistic attempts of a PATCH before it takes the row lock (each lost only to a concurrent write of the same user). */
const OPTIMISTIC_PATCHES = 3;

/**
 * A PATCH reads the user, applies the operations, and stores the result only if the user is still
 * at the version read, marking it in the same statement: two prepared round trips, no transaction.
 * A concurrent write of the same user makes it read again; after OPTIMISTIC_PATCHES such losses it
 * runs the same steps in a transaction that locks the row, which cannot lose.
 */
export async function patchUser(
  db: Database,
  id: string,
  body: unknown,
  context: WriteContext,
  catalogue: CatalogueSource = NO_CATALOGUE,
): Promise<StoredResource> {
  const operations = normalisePatchRequest("User", body);
  let read: Promise<Catalogue> | undefined;
  const catalogueOnce = () => (read ??= catalogue());
  // Checks what the operations bring and names the change: an assignment's words when roles[] or
  // entitlements[] changed and activation did not (the log then says what was assigned or removed).
  const patched = async (current: StoredResource | undefined) => {
    if (!current) throw notFound(id);
    checkIfMatch(context, current.version);
    const resource = coerceResource("User", applyPatch("User", current.resource, operations));
    await checkAssignments(resource, current.resource, catalogueOnce);
    const columns = userColumns(resource);
    const change = userChange(current.resource.active !== false, columns.active);
    const assignments =
      change.what === "user-updated" ? await assignmentsChange(resource, current.resource, catalogueOnce) : undefined;
    const trigger = idpTrigger(context, `Users/${id}`, assignments ?? change);
    return { version: current.version, resource, columns, trigger };
  };
  let stored: StoredResource | undefined;
  for (let attempt = 1; !stored && attempt <= OPTIMISTIC_PATCHES; attempt++) {
    const next = await patched(await getIdpUser(db, id));
    stored = await withIdpRetry(() =>
      updateIdpUserIfVersionMarked(db, id, next.version, next.columns, next.resource, next.trigger),
    );
  }
  stored ??= await inIdpTransaction(db, async (manager) => {
    const next = await patched(await lockIdpUser(manager, id));
    return (await updateIdpUserMarked(manager, id, next.columns, next.resource, next.trigger))!;
  });
  log.info("scim", "user patched", {
    userId: id,
    operations: operations.length,
    active: stored.resource.active !== false,
  });
  return stored;
}

export async function deleteUser(db: Database, id: string, context: WriteContext): Promise<void> {
  await inIdpTransaction(db, async (manager) => {
    if (context.ifMatch) {
      const current = await lockIdpUser(manager, id);
      if (!current) throw notFound(id);
      checkIfMatch(context, current.version);
    }
    if (!(await deleteIdpUser(manager, id))) throw notFound(id);
    await markUsersDirty(manager, [id], idpTrigger(context, `Users/${id}`, { what: "user-deleted" }));
  });
  log.info("scim", "user deleted", { userId: id });
}
