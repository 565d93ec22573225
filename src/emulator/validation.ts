import { badRequest } from "./http.js";

/**
 * Pure validation rules of the platform document. Each returns a problem string (or throws a
 * 400 for request-level bounds) so the same rule serves fatal and non-fatal answers.
 */

export const MAX_IDS_PER_REQUEST = 50;
export const MAX_TRACK_OBJECTS = 75;
const MAX_PROPERTY_CHARS = 255;
const MAX_NESTED_PROPERTIES_BYTES = 50 * 1024;

const E164 = /^\+[1-9]\d{1,14}$/;
export function isE164(value: unknown): value is string {
  return typeof value === "string" && E164.test(value);
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
export function isEmail(value: unknown): value is string {
  return typeof value === "string" && value.length <= 255 && EMAIL.test(value);
}

/** Emails are matched case-insensitively, as mail systems do. */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}(:?\d{2})?)?)?$/;
const PLATFORM_DATE_TIME = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}):(\d{3})(Z|[+-]\d{4})$/;

/** ISO 8601 or the document's `yyyy-MM-dd'T'HH:mm:ss:SSSZ`; undefined when not a datetime. */
export function parseDateTime(value: unknown): Date | undefined {
  if (typeof value !== "string") return undefined;
  let candidate = value;
  const platform = PLATFORM_DATE_TIME.exec(value);
  if (platform)
    candidate = `${platform[1]}.${platform[2]}${platform[3] === "Z" ? "Z" : `${platform[3].slice(0, 3)}:${platform[3].slice(3)}`}`;
  else if (!ISO_DATE_TIME.test(value)) return undefined;
  const date = new Date(candidate);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** Rules 1–4 of "Event properties object"; returns the first problem or undefined. */
export function eventPropertiesProblem(properties: unknown): string | undefined {
  if (properties === undefined) return undefined;
  if (typeof properties !== "object" || properties === null || Array.isArray(properties))
    return "properties must be an object";
  let nested = false;
  for (const [name, value] of Object.entries(properties)) {
    if (name.length === 0) return "property names must be non-empty";
    if (name.length > MAX_PROPERTY_CHARS)
      return `property name longer than ${MAX_PROPERTY_CHARS} characters: ${name.slice(0, 40)}…`;
    if (name.startsWith("$")) return `property name must not start with $: ${name}`;
    const problem = propertyValueProblem(name, value);
    if (problem) return problem;
    if (typeof value === "object" && value !== null) nested = true;
  }
  if (nested && Buffer.byteLength(JSON.stringify(properties)) > MAX_NESTED_PROPERTIES_BYTES) {
    return "properties with arrays or objects must be at most 50 KB";
  }
  return undefined;
}

function propertyValueProblem(name: string, value: unknown): string | undefined {
  if (typeof value === "number") return Number.isFinite(value) ? undefined : `property ${name} is not a finite number`;
  if (typeof value === "boolean" || value === null) return undefined;
  if (typeof value === "string")
    return value.length > MAX_PROPERTY_CHARS
      ? `property ${name} is longer than ${MAX_PROPERTY_CHARS} characters`
      : undefined;
  if (Array.isArray(value)) {
    for (const item of value) {
      if (parseDateTime(item)) return `property ${name}: datetimes are not supported inside arrays`;
      if (typeof item === "string" && item.length > MAX_PROPERTY_CHARS)
        return `property ${name} has a string longer than ${MAX_PROPERTY_CHARS} characters`;
    }
    return undefined;
  }
  if (typeof value === "object") return undefined; // ingested as a string
  return `property ${name} has an unsupported type`;
}

/**
 * A "string or array of up to 50" parameter (emails, phones, ids). Throws a 400 when absent
 * (if required), empty, over 50, or holding a non-string.
 */
export function stringList(
  value: unknown,
  field: string,
  options: { required: boolean; max?: number },
): string[] | undefined {
  const max = options.max ?? MAX_IDS_PER_REQUEST;
  if (value === undefined || value === null) {
    if (options.required) throw badRequest(`${field} is required`);
    return undefined;
  }
  const list = Array.isArray(value) ? value : [value];
  if (list.length === 0) throw badRequest(`${field} must hold at least 1 value`);
  if (list.length > max) throw badRequest(`${field} may hold at most ${max} values`);
  for (const item of list)
    if (typeof item !== "string" || item.length === 0) throw badRequest(`${field} must hold non-empty strings`);
  return list as string[];
}

export function emailList(value: unknown, field: string, required: boolean): string[] | undefined {
  const list = stringList(value, field, { required });
  if (!list) return undefined;
  for (const email of list) if (!isEmail(email)) throw badRequest(`${field}: not an email address: ${email}`);
  return list.map(normaliseEmail);
}

export function phoneList(value: unknown, field: string, required: boolean): string[] | undefined {
  const list = stringList(value, field, { required });
  if (!list) return undefined;
  for (const phone of list) if (!isE164(phone)) throw badRequest(`${field}: not an E.164 phone number: ${phone}`);
  return list;
}

export function oneOf<T extends string>(value: unknown, field: string, allowed: readonly T[]): T {
  if (typeof value !== "string" || !(allowed as readonly string[]).includes(value)) {
    throw badRequest(`${field} must be one of ${allowed.join(", ")}`);
  }
  return value as T;
}

export function requiredString(value: unknown, field: string): string {
  if (typeof value !== "string" || value.length === 0)
    throw badRequest(`${field} is required and must be a non-empty string`);
  return value;
}

export type UserAlias = { alias_name: string; alias_label: string };

export function aliasProblem(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null)
    return "user_alias must be an object with alias_name and alias_label";
  const { alias_name, alias_label } = value as Record<string, unknown>;
  if (typeof alias_name !== "string" || alias_name === "") return "alias_name is required";
  if (typeof alias_label !== "string" || alias_label === "") return "alias_label is required";
  return undefined;
}
