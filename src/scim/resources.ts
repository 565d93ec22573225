import { BadRequestError } from "../errors.js";
import { ENTERPRISE_SCHEMA, GROUP_SCHEMA, USER_SCHEMA } from "./schemas.js";
import { isRecord } from "../json.js";

/**
 * Stored record ↔ SCIM resource. The stored resource is the schema-coerced SCIM body without
 * id and meta; the indexed columns are extracted from it here, and id/meta are added back from
 * the row on the way out.
 */

type Json = Record<string, unknown>;

export type StoredRecord = { id: string; resource: Json; version: number; createdAt: Date; updatedAt: Date };
export type MemberRecord = { id: string; display: string | null };

const text = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);

export function userColumns(resource: Json) {
  const userName = text(resource.userName)?.trim();
  if (!userName) throw new BadRequestError("userName is required and must not be empty", "invalidValue");
  const name = isRecord(resource.name) ? resource.name : {};
  const enterprise = isRecord(resource[ENTERPRISE_SCHEMA]) ? (resource[ENTERPRISE_SCHEMA] as Json) : {};
  return {
    userName,
    externalId: text(resource.externalId),
    // An IdP that never sends `active` means an active user.
    active: resource.active !== false,
    displayName: text(resource.displayName),
    givenName: text(name.givenName),
    familyName: text(name.familyName),
    department: text(enterprise.department),
  };
}

export function groupColumns(resource: Json) {
  const displayName = text(resource.displayName)?.trim();
  if (!displayName) throw new BadRequestError("displayName is required and must not be empty", "invalidValue");
  return { displayName, externalId: text(resource.externalId) };
}

/** Weak ETag of a stored version (RFC 7644 3.14). */
export const etagOf = (version: number) => `W/"${version}"`;

const twoDigits = (n: number) => (n < 10 ? `0${n}` : `${n}`);

/**
 * `date.toISOString()`, written out for years 1000–9999 (a third of the native call's cost: two per
 * presented resource, issue 16); other years, and invalid dates, are left to the native call.
 */
export function isoTime(date: Date): string {
  const year = date.getUTCFullYear();
  if (!(year >= 1000 && year <= 9999)) return date.toISOString();
  const ms = date.getUTCMilliseconds();
  return `${year}-${twoDigits(date.getUTCMonth() + 1)}-${twoDigits(date.getUTCDate())}T${twoDigits(date.getUTCHours())}:${twoDigits(date.getUTCMinutes())}:${twoDigits(date.getUTCSeconds())}.${ms < 10 ? "00" : ms < 100 ? "0" : ""}${ms}Z`;
}

function meta(resourceType: "User" | "Group", record: StoredRecord, baseUrl: string) {
  return {
    resourceType,
    created: isoTime(record.createdAt),
    lastModified: isoTime(record.updatedAt),
    location: `${baseUrl}/${resourceType}s/${record.id}`,
    version: etagOf(record.version),
  };
}

export function presentUser(record: StoredRecord, baseUrl: string): Json {
  const { resource } = record;
  const schemas = resource[ENTERPRISE_SCHEMA] ? [USER_SCHEMA, ENTERPRISE_SCHEMA] : [USER_SCHEMA];
  return {
    schemas,
    id: record.id,
    ...resource,
    active: resource.active !== false,
    meta: meta("User", record, baseUrl),
  };
}

/** `members` undefined (excludedAttributes=members skips loading them) or empty leaves the attribute out. */
export function presentGroup(record: StoredRecord, baseUrl: string, members: MemberRecord[] | undefined): Json {
  const out: Json = { schemas: [GROUP_SCHEMA], id: record.id, ...record.resource };
  // An emptied member list is unassigned (RFC 7643 2.5): left out rather than `members: []`.
  if (members?.length) {
    out.members = members.map((m) => ({
      value: m.id,
      ...(m.display ? { display: m.display } : {}),
      type: "User",
      $ref: `${baseUrl}/Users/${m.id}`,
    }));
  }
  out.meta = meta("Group", record, baseUrl);
  return out;
}
