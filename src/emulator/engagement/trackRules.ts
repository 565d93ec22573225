import {
  eventPropertiesProblem,
  isE164,
  isEmail,
  normaliseEmail,
  parseDateTime,
  aliasProblem,
  type UserAlias,
} from "../validation.js";
import type { EmailSubscriptionState, SubscriptionState } from "./profiles.js";
import { isRecord } from "../../json.js";

/**
 * Pure validation of `/users/track` objects. Each object is checked completely before anything is
 * applied, so a non-fatal error leaves that object's user untouched and the rest processed.
 */

export type InputArray = "attributes" | "events" | "purchases";

/** How an object names its user; the first present in this order identifies, the rest are data. */
export type Identity =
  | { kind: "external_id"; value: string }
  | { kind: "user_alias"; value: UserAlias }
  | { kind: "platform_id"; value: string }
  | { kind: "email"; value: string }
  | { kind: "phone"; value: string };

export type Validated<T> =
  { ok: true; identity: Identity; updateOnly: boolean | undefined; data: T } | { ok: false; problem: string };

export type AttributeChanges = {
  email?: string;
  phone?: string;
  emailSubscribe?: EmailSubscriptionState;
  groups: Array<{ id: string; state: SubscriptionState }>;
  custom: Record<string, unknown>;
};

/** External ids the platform treats as dummy users (a fatal error when sent). */
const BLACKLISTED_EXTERNAL_IDS = new Set([
  "null",
  "undefined",
  "none",
  "nil",
  "n/a",
  "na",
  "0",
  "-1",
  "unknown",
  "anonymous",
  "guest",
  "user",
  "test",
]);
export const BLACKLISTED_MESSAGE = "provided external_id is blacklisted and disallowed";

const RESERVED = new Set([
  "external_id",
  "user_alias",
  "platform_id",
  "_update_existing_only",
  "email",
  "phone",
  "email_subscribe",
  "subscription_groups",
]);
const EMAIL_STATES = new Set(["subscribed", "unsubscribed", "opted_in"]);

export function isBlacklistedExternalId(value: unknown): boolean {
  return typeof value === "string" && BLACKLISTED_EXTERNAL_IDS.has(value.trim().toLowerCase());
}

function identify(o: Record<string, unknown>, allowPhone: boolean): Identity | string {
  if (o.external_id !== undefined) {
    return typeof o.external_id === "string" && o.external_id !== ""
      ? { kind: "external_id", value: o.external_id }
      : "external_id must be a non-empty string";
  }
  if (o.user_alias !== undefined) {
    const problem = aliasProblem(o.user_alias);
    if (problem) return problem;
    const a = o.user_alias as UserAlias;
    return { kind: "user_alias", value: { alias_name: a.alias_name, alias_label: a.alias_label } };
  }
  if (o.platform_id !== undefined) {
    return typeof o.platform_id === "string" && o.platform_id !== ""
      ? { kind: "platform_id", value: o.platform_id }
      : "platform_id must be a non-empty string";
  }
  if (o.email !== undefined)
    return isEmail(o.email) ? { kind: "email", value: normaliseEmail(o.email) } : "email is not a valid email address";
  if (allowPhone && o.phone !== undefined) {
    // Phone-based updates work only with a valid phone number.
    return isE164(o.phone) ? { kind: "phone", value: o.phone } : "phone is not a valid E.164 phone number";
  }
  return allowPhone
    ? "one of external_id, user_alias, platform_id, email or phone is required"
    : "one of external_id, user_alias, platform_id or email is required";
}

function common(
  o: unknown,
  allowPhone: boolean,
): { identity: Identity; updateOnly: boolean | undefined; o: Record<string, unknown> } | string {
  if (!isRecord(o)) return "must be an object";
  const identity = identify(o, allowPhone);
  if (typeof identity === "string") return identity;
  if (o._update_existing_only !== undefined && typeof o._update_existing_only !== "boolean")
    return "_update_existing_only must be a boolean";
  return { identity, updateOnly: o._update_existing_only as boolean | undefined, o };
}

export function validateAttributes(input: unknown): Validated<AttributeChanges> {
  const base = common(input, true);
  if (typeof base === "string") return { ok: false, problem: base };
  const { o, identity } = base;
  const changes: AttributeChanges = { groups: [], custom: {} };
  if (o.email !== undefined && identity.kind !== "email") {
    if (!isEmail(o.email)) return { ok: false, problem: "email is not a valid email address" };
    changes.email = normaliseEmail(o.email);
  }
  if (o.phone !== undefined && identity.kind !== "phone") {
    if (!isE164(o.phone)) return { ok: false, problem: "phone is not a valid E.164 phone number" };
    changes.phone = o.phone;
  }
  if (o.email_subscribe !== undefined) {
    if (typeof o.email_subscribe !== "string" || !EMAIL_STATES.has(o.email_subscribe))
      return { ok: false, problem: "email_subscribe must be subscribed, unsubscribed or opted_in" };
    changes.emailSubscribe = o.email_subscribe as EmailSubscriptionState;
  }
  if (o.subscription_groups !== undefined) {
    if (!Array.isArray(o.subscription_groups)) return { ok: false, problem: "subscription_groups must be an array" };
    for (const entry of o.subscription_groups) {
      if (!isRecord(entry) || typeof entry.subscription_group_id !== "string" || entry.subscription_group_id === "") {
        return { ok: false, problem: "subscription_groups entries need a subscription_group_id" };
      }
      if (entry.subscription_state !== "subscribed" && entry.subscription_state !== "unsubscribed") {
        return { ok: false, problem: "subscription_state must be subscribed or unsubscribed" };
      }
      changes.groups.push({ id: entry.subscription_group_id, state: entry.subscription_state });
    }
  }
  for (const [name, value] of Object.entries(o)) {
    if (RESERVED.has(name)) continue;
    const problem = customAttributeProblem(name, value);
    if (problem) return { ok: false, problem };
    changes.custom[name] = value;
  }
  return { ok: true, identity, updateOnly: base.updateOnly, data: changes };
}

/** Custom attributes: string, boolean, number or array of those; null removes the attribute. */
function customAttributeProblem(name: string, value: unknown): string | undefined {
  if (name === "" || name.startsWith("$")) return `invalid custom attribute name: ${name}`;
  if (value === null || typeof value === "string" || typeof value === "boolean") return undefined;
  if (typeof value === "number")
    return Number.isFinite(value) ? undefined : `custom attribute ${name} is not a finite number`;
  if (Array.isArray(value) && value.every((v) => ["string", "number", "boolean"].includes(typeof v))) return undefined;
  return `custom attribute ${name} must be a string, boolean, number or array`;
}

export function validateEvent(input: unknown): Validated<{ name: string }> {
  const base = common(input, false);
  if (typeof base === "string") return { ok: false, problem: base };
  const { o } = base;
  if (typeof o.name !== "string" || o.name === "") return { ok: false, problem: "name is required" };
  if (!parseDateTime(o.time)) return { ok: false, problem: "time is required: ISO 8601 or yyyy-MM-dd'T'HH:mm:ss:SSSZ" };
  if (o.app_id !== undefined && typeof o.app_id !== "string") return { ok: false, problem: "app_id must be a string" };
  const problem = eventPropertiesProblem(o.properties);
  if (problem) return { ok: false, problem };
  return { ok: true, identity: base.identity, updateOnly: base.updateOnly, data: { name: o.name } };
}

export function validatePurchase(input: unknown): Validated<{ productId: string }> {
  const base = common(input, false);
  if (typeof base === "string") return { ok: false, problem: base };
  const { o } = base;
  if (typeof o.product_id !== "string" || o.product_id === "" || o.product_id.length > 255)
    return { ok: false, problem: "product_id is required (at most 255 characters)" };
  if (typeof o.currency !== "string" || !/^[A-Za-z]{3}$/.test(o.currency))
    return { ok: false, problem: "currency is required: a three-letter currency code" };
  if (typeof o.price !== "number" || !Number.isFinite(o.price))
    return { ok: false, problem: "price is required and must be a number" };
  if (
    o.quantity !== undefined &&
    (typeof o.quantity !== "number" || !Number.isInteger(o.quantity) || o.quantity < 1 || o.quantity > 100)
  ) {
    return { ok: false, problem: "quantity must be an integer from 1 to 100" };
  }
  if (!parseDateTime(o.time)) return { ok: false, problem: "time is required: ISO 8601" };
  if (o.app_id !== undefined && typeof o.app_id !== "string") return { ok: false, problem: "app_id must be a string" };
  const problem = eventPropertiesProblem(o.properties);
  if (problem) return { ok: false, problem };
  return { ok: true, identity: base.identity, updateOnly: base.updateOnly, data: { productId: o.product_id } };
}
