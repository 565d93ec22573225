import { BadRequestError } from "../errors.js";
import { getCaseInsensitive } from "./filterEval.js";
import {
  ENTERPRISE_SCHEMA,
  RESOURCE_SCHEMAS,
  resolveAttribute,
  type AttributeInfo,
  type ResourceKind,
} from "./schemas.js";
import { isRecord } from "../json.js";

/**
 * Where the IdPs' dialects become RFC 7644, in one place, before anything else reads a request:
 *
 * - Entra ID (without the `aadOptscim062020` flag) capitalises ops (`"Replace"`), sends booleans
 *   as `"True"`/`"False"`, sends `manager` as a bare id string and removes it with `""`, and
 *   removes group members with a value list on the `members` path. Its app roles
 *   (`AppRoleAssignmentsComplex`) arrive with `primary: false` on every role, and in a PATCH each
 *   role's `value` is the assignment as JSON inside a string
 *   (`{"value": "{\"id\":\"…\",\"value\":\"25\",\"displayName\":\"Role1234\"}"}`, Microsoft's
 *   "Customizing user provisioning attribute-mappings"): `normaliseAssigned` unwraps it.
 * - Okta sends path-less `replace` ops whose value holds the attributes (`{"active": false}`,
 *   Push Groups' `{"id": ..., "displayName": ...}`), with dotted and `urn:` keys.
 */

export type PatchOperation = {
  op: "add" | "replace" | "remove";
  path?: string;
  value?: unknown;
  /** Expanded from a path-less value: unknown or read-only attributes are skipped, not rejected. */
  lenient?: boolean;
};

const MAX_OPERATIONS = 1000;
const SERVER_OWNED = new Set(["id", "meta", "schemas", "groups"]);

/** The operations of a PATCH request body, validated, with IdP dialects normalised. */
export function normalisePatchRequest(kind: ResourceKind, body: unknown): PatchOperation[] {
  if (!isRecord(body)) throw new BadRequestError("PATCH body must be a JSON object with Operations", "invalidSyntax");
  const operations = getCaseInsensitive(body, "Operations");
  if (!Array.isArray(operations) || !operations.length)
    throw new BadRequestError("PATCH body needs a non-empty Operations array", "invalidSyntax");
  if (operations.length > MAX_OPERATIONS)
    throw new BadRequestError(`PATCH carries more than ${MAX_OPERATIONS} operations`, "tooMany");
  return operations.flatMap((raw, index) => normaliseOperation(kind, raw, index));
}

function normaliseOperation(kind: ResourceKind, raw: unknown, index: number): PatchOperation[] {
  if (!isRecord(raw)) throw new BadRequestError(`Operation ${index + 1} is not an object`, "invalidSyntax");
  const opName = getCaseInsensitive(raw, "op");
  const op = typeof opName === "string" ? opName.toLowerCase() : undefined;
  if (op !== "add" && op !== "replace" && op !== "remove") {
    throw new BadRequestError(
      `Operation ${index + 1} has op ${JSON.stringify(opName ?? null)}: use add, replace or remove`,
      "invalidSyntax",
    );
  }
  const rawPath = getCaseInsensitive(raw, "path");
  if (rawPath !== undefined && rawPath !== null && typeof rawPath !== "string")
    throw new BadRequestError(`Operation ${index + 1} has a non-string path`, "invalidPath");
  const path = typeof rawPath === "string" && rawPath.trim() ? rawPath.trim() : undefined;
  const value = getCaseInsensitive(raw, "value");

  if (!path) {
    if (op === "remove") throw new BadRequestError(`Operation ${index + 1} removes without a path`, "noTarget");
    if (!isRecord(value))
      throw new BadRequestError(
        `Operation ${index + 1} has no path, so its value must be an object of attributes`,
        "invalidValue",
      );
    return expandPathless(kind, op, value);
  }
  if (op !== "remove" && value === undefined)
    throw new BadRequestError(`Operation ${index + 1} (${op} ${path}) has no value`, "invalidValue");
  const extension = extensionNamed(kind, path);
  if (extension) return wholeExtension(extension, op, value, index);
  return [{ op, path, value: isAssignedAttribute(kind, path) ? normaliseAssigned(value) : value }];
}

/** The extension schema whose URN is exactly `name` (a path or key naming the whole extension). */
export function extensionNamed(kind: ResourceKind, name: string): string | undefined {
  return RESOURCE_SCHEMAS[kind].slice(1).find((s) => s.urn.toLowerCase() === name.toLowerCase())?.urn;
}

/**
 * A path naming a whole extension (`urn:...:enterprise:2.0:User`): `add`/`replace` with an object
 * set its sub-attributes (RFC 7644 3.5.2.1/3.5.2.3: those not named are left unchanged; a
 * `schemas` member in the value is accepted and ignored), `remove` (or a null value) unassigns it.
 */
function wholeExtension(urn: string, op: PatchOperation["op"], value: unknown, index: number): PatchOperation[] {
  if (op === "remove" || value === null) return [{ op: "remove", path: urn }];
  if (!isRecord(value))
    throw new BadRequestError(
      `Operation ${index + 1} sets ${urn}: its value must be an object of attributes`,
      "invalidValue",
    );
  return Object.entries(value)
    .filter(([sub]) => sub.toLowerCase() !== "schemas")
    .map(([sub, subValue]) => ({ op, path: `${urn}:${sub}`, value: subValue }));
}

/** `{"op":"replace","value":{"active":false,"name.givenName":"A","urn:...:User":{...}}}` → one op per attribute. */
function expandPathless(kind: ResourceKind, op: "add" | "replace", value: Record<string, unknown>): PatchOperation[] {
  const expanded: PatchOperation[] = [];
  for (const [name, inner] of Object.entries(value)) {
    if (SERVER_OWNED.has(name.toLowerCase())) continue;
    const extension = extensionNamed(kind, name);
    if (extension && isRecord(inner)) {
      for (const [sub, subValue] of Object.entries(inner)) {
        if (sub.toLowerCase() !== "schemas")
          expanded.push({ op, path: `${extension}:${sub}`, value: subValue, lenient: true });
      }
    } else {
      const normalised = isAssignedAttribute(kind, name) ? normaliseAssigned(inner) : inner;
      expanded.push({ op, path: name, value: normalised, lenient: true });
    }
  }
  return expanded;
}

const STRING_BOOLEAN = /^(true|false)$/i;

/** `"True"`/`"False"` → booleans where the schema says boolean (Entra sends strings). */
export function coerceBoolean(attribute: AttributeInfo, value: unknown): unknown {
  if (attribute.type === "boolean" && typeof value === "string" && STRING_BOOLEAN.test(value))
    return value.toLowerCase() === "true";
  if (attribute.type === "complex" && attribute.subAttributes) {
    if (Array.isArray(value)) return value.map((v) => coerceBoolean({ ...attribute, multiValued: false }, v));
    if (isRecord(value)) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) {
        const sub = attribute.subAttributes.find((s) => s.name.toLowerCase() === k.toLowerCase());
        out[k] = sub ? coerceBoolean(sub, v) : v;
      }
      return out;
    }
  }
  if (attribute.multiValued && Array.isArray(value))
    return value.map((v) => coerceBoolean({ ...attribute, multiValued: false }, v));
  return value;
}

/** True for the enterprise `manager` attribute, whose Entra form is a bare id string. */
export function isManager(extension: string | undefined, attribute: AttributeInfo): boolean {
  return extension === ENTERPRISE_SCHEMA && attribute.name === "manager";
}

/** Entra's manager: `"id"` → `{value: "id"}`; `""` (or `{value: ""}`) → undefined, meaning remove. */
export function normaliseManager(value: unknown): unknown {
  if (typeof value === "string") return value.trim() ? { value } : undefined;
  if (Array.isArray(value) && value.length === 1) return normaliseManager(value[0]);
  if (isRecord(value)) {
    const id = getCaseInsensitive(value, "value");
    if (id === "" || id === null) return undefined;
  }
  return value;
}

/**
 * A whole inbound resource (POST, PUT) in RFC form: booleans from strings, the manager object
 * from a bare string. Unknown attributes are left for the schema coercion to drop.
 */
export function normaliseResource(kind: ResourceKind, input: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(input)) {
    const extension = extensionNamed(kind, name);
    if (extension && isRecord(value)) {
      const inner: Record<string, unknown> = {};
      for (const [sub, subValue] of Object.entries(value)) {
        const resolved = resolveAttribute(kind, `${extension}:${sub}`);
        if (!resolved) continue;
        const normalised = isManager(extension, resolved.attribute)
          ? normaliseManager(subValue)
          : coerceBoolean(resolved.attribute, subValue);
        if (normalised !== undefined) inner[sub] = normalised;
      }
      out[extension] = inner;
      continue;
    }
    const resolved = name.includes(":") || name.includes(".") ? undefined : resolveAttribute(kind, name);
    const assigned = isAssignedAttribute(kind, name) ? normaliseAssigned(value) : value;
    out[name] = resolved ? coerceBoolean(resolved.attribute, assigned) : assigned;
  }
  return out;
}

/** A user's `roles` or `entitlements`, as a whole attribute (`roles`, `Roles`) or one of its items (`roles[value eq "x"]`). */
function isAssignedAttribute(kind: ResourceKind, path: string): boolean {
  return kind === "User" && /^(roles|entitlements)(\[|$)/i.test(path.trim());
}

/**
 * Entra's PATCH form of an app role: the item's `value` is JSON inside a string
 * (`{"id": <assignment id>, "value": <app role value>, "displayName": ...}`). The item becomes
 * `{value, display}` from the inner object, keeping the item's own other members (`primary`,
 * `type`). Anything else, including a string that is not such JSON, is left as sent.
 */
function normaliseAssigned(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normaliseAssigned);
  if (!isRecord(value)) return value;
  const raw = getCaseInsensitive(value, "value");
  if (typeof raw !== "string" || !raw.trimStart().startsWith("{")) return value;
  let inner: unknown;
  try {
    inner = JSON.parse(raw);
  } catch {
    return value;
  }
  const innerValue = isRecord(inner) ? getCaseInsensitive(inner, "value") : undefined;
  if (typeof innerValue !== "string") return value;
  const display = getCaseInsensitive(inner, "displayName") ?? getCaseInsensitive(inner, "display");
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (k.toLowerCase() !== "value") out[k] = v;
  return { ...out, value: innerValue, ...(typeof display === "string" ? { display } : {}) };
}
