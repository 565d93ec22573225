import type { Database } from "../db/database.js";
import { NotFoundError } from "../errors.js";
import { markUsersDirty } from "../db/reconcile/queueRepository.js";
import {
  deleteIdpUser,
  getIdpUser,
  insertIdpUserMarked,
  listIdpUsers,
  lockIdpUser,
  replaceIdpUserMarked,
  updateIdpUserIfVersionMarked,
  updateIdpUserMarked,
  type IdpUserColumns,
} from "../db/idp/userRepository.js";
import { type Page, type StoredResource } from "../db/idp/paging.js";
import type { DirtyTrigger } from "../vocabulary/reconcile.js";
import { inIdpTransaction, withIdpRetry } from "../db/idp/transaction.js";
import { log } from "../logging/logger.js";
import { MAX_FILTER_LENGTH, parseFilter } from "./filter.js";
import { filterToSql, type SqlCondition } from "../db/idp/filterSql.js";
import { normalisePatchRequest, normaliseResource } from "./idpQuirks.js";
import { applyPatch } from "./patchApply.js";
import { userColumns } from "./resources.js";
import { sortToSql, type SortRequest } from "../db/idp/sortSql.js";
import { coerceResource } from "./schemas.js";
import { checkIfMatch, idpTrigger, resourceBody, userChange, type WriteContext } from "./writeContext.js";
import { assignmentsChange, checkAssignments } from "./assignments.js";
import { EMPTY_CATALOGUE } from "../mapping/catalogue.js";
import type { Catalogue } from "../mapping/compiled.js";

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

/**
 * A PUT. Most leave the user's roles[] and entitlements[] as stored: then only the change's name
 * depends on the current row, and one statement locks, replaces and marks. One that changes them,
 * or carries If-Match, reads the user first, as a PATCH does: the values it adds are checked
 * against the catalogue (a value held since before the catalogue dropped it does not block the
 * IdP's other changes) and the log names what it assigned and removed.
 */
export async function replaceUser(
  db: Database,
  id: string,
  body: unknown,
  context: WriteContext,
  catalogue: CatalogueSource = NO_CATALOGUE,
): Promise<StoredResource> {
  const { resource, columns } = toStoredUser(body);
  let stored: StoredResource | undefined;
  if (!context.ifMatch) {
    const trigger = (wasActive: boolean) => idpTrigger(context, `Users/${id}`, userChange(wasActive, columns.active));
    stored = await withIdpRetry(() => replaceIdpUserMarked(db, id, columns, resource, trigger));
  }
  // Nothing written: If-Match, roles or entitlements changed, or no such user (writeOverCurrent answers 404).
  if (!stored) {
    const catalogueOnce = once(catalogue);
    stored = await writeOverCurrent(db, id, async (current) => {
      checkIfMatch(context, current.version);
      await checkAssignments(resource, current.resource, catalogueOnce);
      return { resource, columns, trigger: await namedTrigger(context, id, current, resource, columns, catalogueOnce) };
    });
  }
  log.info("scim", "user replaced", { userId: id, active: columns.active });
  return stored;
}

/** Optimistic attempts of a write over the current user before it takes the row lock (each lost only to a concurrent write of the same user). */
const OPTIMISTIC_WRITES = 3;

type NextUser = { resource: Record<string, unknown>; columns: IdpUserColumns; trigger: DirtyTrigger };

/**
 * A write computed from the user as it is (a PATCH, a PUT that reads it first): reads the user,
 * computes the new state, and stores it only if the user is still at the version read, marking it
 * in the same statement: two prepared round trips, no transaction. A concurrent write of the same
 * user makes it read again; after OPTIMISTIC_WRITES such losses it runs the same steps in a
 * transaction that locks the row, which cannot lose.
 */
async function writeOverCurrent(
  db: Database,
  id: string,
  next: (current: StoredResource) => Promise<NextUser>,
): Promise<StoredResource> {
  const from = async (current: StoredResource | undefined) => {
    if (!current) throw notFound(id);
    return { version: current.version, ...(await next(current)) };
  };
  for (let attempt = 1; attempt <= OPTIMISTIC_WRITES; attempt++) {
    const n = await from(await getIdpUser(db, id));
    const stored = await withIdpRetry(() =>
      updateIdpUserIfVersionMarked(db, id, n.version, n.columns, n.resource, n.trigger),
    );
    if (stored) return stored;
  }
  return inIdpTransaction(db, async (manager) => {
    const n = await from(await lockIdpUser(manager, id));
    return (await updateIdpUserMarked(manager, id, n.columns, n.resource, n.trigger))!;
  });
}

/**
 * The trigger of a write over `current`: an assignment's words when roles[] or entitlements[]
 * changed and activation did not (the log then says what was assigned or removed).
 */
async function namedTrigger(
  context: WriteContext,
  id: string,
  current: StoredResource,
  resource: Record<string, unknown>,
  columns: IdpUserColumns,
  catalogue: CatalogueSource,
): Promise<DirtyTrigger> {
  const change = userChange(current.resource.active !== false, columns.active);
  const assignments =
    change.what === "user-updated" ? await assignmentsChange(resource, current.resource, catalogue) : undefined;
  return idpTrigger(context, `Users/${id}`, assignments ?? change);
}

/** The catalogue read at most once per request. */
function once(catalogue: CatalogueSource): CatalogueSource {
  let read: Promise<Catalogue> | undefined;
  return () => (read ??= catalogue());
}

/** A PATCH: the operations applied to the user as it is (writeOverCurrent). */
export async function patchUser(
  db: Database,
  id: string,
  body: unknown,
  context: WriteContext,
  catalogue: CatalogueSource = NO_CATALOGUE,
): Promise<StoredResource> {
  const operations = normalisePatchRequest("User", body);
  const catalogueOnce = once(catalogue);
  const stored = await writeOverCurrent(db, id, async (current) => {
    checkIfMatch(context, current.version);
    const resource = coerceResource("User", applyPatch("User", current.resource, operations));
    await checkAssignments(resource, current.resource, catalogueOnce);
    const columns = userColumns(resource);
    return { resource, columns, trigger: await namedTrigger(context, id, current, resource, columns, catalogueOnce) };
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
