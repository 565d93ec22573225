import { randomUUID } from "node:crypto";
import { constraintName, sqlState, UniqueViolationError } from "../../errors.js";
import type { SqlCondition } from "./filterSql.js";
import type { SqlSort } from "./sortSql.js";
import type { Database, Queryable } from "../database.js";
import { readQuery } from "./readPath.js";
import { listPage, RETURNING, toStored, type Page, type Row, type StoredResource } from "./paging.js";
import { markDirtyCtes, markDirtyParams } from "../reconcile/queueRepository.js";
import type { DirtyTrigger } from "../../vocabulary/reconcile.js";
import { isUuid } from "../../ids.js";

/**
 * IdP users as the SCIM server stores them: the canonical SCIM resource (jsonb) plus the columns
 * that filters, the case-insensitive userName uniqueness and the reconciler read. Functions take
 * a `Queryable` (the Database, or a transaction) so writes join the caller's transaction. The
 * paging shared with groups is paging.ts; the admin UI's query userAdminQueries.ts; the
 * reconciler's reads userReconcileReads.ts.
 */

export type IdpUserColumns = {
  userName: string;
  externalId: string | null;
  active: boolean;
  displayName: string | null;
  givenName: string | null;
  familyName: string | null;
  department: string | null;
};

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
  WITH current AS (
     SELECT id, active,
            resource->'roles' IS NOT DISTINCT FROM $9::jsonb->'roles'
              AND resource->'entitlements' IS NOT DISTINCT FROM $9::jsonb->'entitlements' AS same_assignments
       FROM idp_users WHERE id = $1 FOR UPDATE),
   updated AS (
     UPDATE idp_users u SET user_name = $2, external_id = $3, active = $4, display_name = $5, given_name = $6,
            family_name = $7, department = $8, resource = $9, version = u.version + 1, updated_at = now()
       FROM current c WHERE u.id = c.id AND c.same_assignments
     RETURNING u.id, u.resource, u.version, u.created_at, u.updated_at, c.active AS was_active),
   ${markDirtyCtes("ARRAY(SELECT id FROM updated)", "(SELECT CASE WHEN was_active THEN $10::jsonb ELSE $11::jsonb END FROM updated)", "$12")}
  SELECT u.id, u.resource, u.version, u.created_at, u.updated_at FROM updated u LEFT JOIN notified ON true`;

/**
 * Locks, replaces and marks the user in one statement (no transaction around it), when nothing but
 * the trigger depends on the row as it was: `trigger(wasActive)` names the change for either case.
 * That holds while the user's roles[] and entitlements[] stay as stored (compared as stored, so a
 * reordered list counts as a change). Undefined (nothing written) when there is no such user or
 * the write would change them: the caller then reads the user, to name what was assigned and
 * removed (or to answer 404).
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

/**
 * Clears the personal data of IdP users inactive and unchanged since before `cutoff`: names,
 * department and the stored resource beyond its schemas, userName, externalId and active. The
 * row, its id, userName and group memberships stay, so the IdP's later requests still find the
 * user, the log and the access report still name them, and a reactivation writes the profile back.
 */
export async function scrubDeactivatedUsers(db: Queryable, cutoff: Date): Promise<number> {
  return db.execute(
    `UPDATE idp_users
        SET display_name = NULL, given_name = NULL, family_name = NULL, department = NULL,
            resource = jsonb_strip_nulls(jsonb_build_object(
              'schemas', resource->'schemas', 'userName', user_name, 'externalId', external_id, 'active', false)),
            version = version + 1
      WHERE NOT active AND updated_at < $1
        AND (display_name IS NOT NULL OR given_name IS NOT NULL OR family_name IS NOT NULL OR department IS NOT NULL
             OR resource - ARRAY['schemas', 'userName', 'externalId', 'active'] <> '{}'::jsonb)`,
    [cutoff],
  );
}
