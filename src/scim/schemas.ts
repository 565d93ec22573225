import SCIMMY from "scimmy";
import { BadRequestError } from "../errors.js";
import { compileFastPlan, fastCoerce, type FastPlan } from "./fastCoerce.js";

/**
 * SCIM schemas (RFC 7643) from scimmy: the definitions the server validates against, the
 * attribute metadata the filter compiler and PATCH applier resolve names with, and the
 * descriptions served at /Schemas.
 */

export const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";
export const ENTERPRISE_SCHEMA = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
export const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";
export const LIST_RESPONSE_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:ListResponse";
export const ERROR_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:Error";

export type ResourceKind = "User" | "Group";

/** Attribute metadata, as RFC 7643 section 7 describes it (the parts the server acts on). */
export type AttributeInfo = {
  name: string;
  type: "string" | "boolean" | "decimal" | "integer" | "dateTime" | "reference" | "binary" | "complex";
  multiValued: boolean;
  caseExact: boolean;
  mutability: string;
  subAttributes?: AttributeInfo[];
};

type ScimmyAttribute = InstanceType<typeof SCIMMY.Types.Attribute>;
type ScimmyDefinition = InstanceType<typeof SCIMMY.Types.SchemaDefinition>;

const COMMON = new Set(["id", "externalId", "meta", "schemas"]);

// canonicalValues are suggestions (RFC 7643 2.3.1); IdPs send other email and phone types.
const relax = (a: ScimmyAttribute): ScimmyAttribute =>
  new SCIMMY.Types.Attribute(a.type, a.name, { ...a.config, canonicalValues: false }, a.subAttributes?.map(relax));

const copyOf = (d: ScimmyDefinition): ScimmyDefinition =>
  new SCIMMY.Types.SchemaDefinition(
    d.name,
    d.id,
    d.description,
    d.attributes.filter((a) => !COMMON.has(a.name)).map(relax),
  );

// Own copies, so the process-wide scimmy definitions are never mutated by extend().
const userDefinition = copyOf(SCIMMY.Schemas.User.definition).extend(
  copyOf(SCIMMY.Schemas.EnterpriseUser.definition),
  false,
);
const groupDefinition = copyOf(SCIMMY.Schemas.Group.definition);

// Server-owned (id, meta, groups), write-only (password) or implied by the resource type (schemas).
const NOT_STORED = new Set(["schemas", "meta", "id", "password", "groups"]);
const fastPlans: Record<ResourceKind, FastPlan> = {
  User: compileFastPlan(userDefinition, NOT_STORED),
  Group: compileFastPlan(groupDefinition, NOT_STORED),
};

/**
 * Validates and canonicalises an inbound resource with scimmy: attribute names in schema case,
 * values type-checked, unknown attributes dropped (RFC 7644 3.3 lets a server ignore them).
 * Server-owned attributes (id, meta) and write-only ones (password) are never kept. Canonical
 * bodies take the fast path (fastCoerce.ts), which gives scimmy's output without scimmy.
 */
export function coerceResource(kind: ResourceKind, input: Record<string, unknown>): Record<string, unknown> {
  const assigned = (withoutUnassigned(input) ?? {}) as Record<string, unknown>;
  return fastCoerceResource(kind, assigned) ?? coerceWithScimmy(kind, assigned);
}

/** The fast path alone (src/scim/fastCoerce.ts): undefined when it leaves the body to scimmy. */
export function fastCoerceResource(kind: ResourceKind, assigned: Record<string, unknown>) {
  return fastCoerce(fastPlans[kind], assigned);
}

/** coerceResource through scimmy: what the fast path leaves undecided, and every error. */
export function coerceWithScimmy(kind: ResourceKind, assigned: Record<string, unknown>): Record<string, unknown> {
  const definition = kind === "User" ? userDefinition : groupDefinition;
  let coerced: Record<string, unknown>;
  try {
    coerced = definition.coerce(assigned) as Record<string, unknown>;
  } catch (error) {
    // scimmy reports a non-conforming value as a TypeError carrying a readable explanation.
    throw new BadRequestError(
      error instanceof Error ? error.message : "Resource does not conform to its schema",
      "invalidValue",
    );
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(JSON.parse(JSON.stringify(coerced)) as Record<string, unknown>)) {
    if (NOT_STORED.has(key)) continue;
    const kept = withoutUnassigned(value);
    if (kept !== undefined) out[key] = kept;
  }
  return out;
}

/**
 * RFC 7643 2.5: null, an empty array and (for us) an empty complex value all mean "unassigned",
 * and an unassigned attribute is left out of the resource, never returned as `[]` or `{}`.
 */
export function withoutUnassigned(value: unknown): unknown {
  // Most bodies have nothing to drop: check without allocating, copy only when needed (hot write path).
  return holdsUnassigned(value) ? stripUnassigned(value) : value;
}

function holdsUnassigned(value: unknown): boolean {
  if (value === null || value === undefined) return true;
  if (Array.isArray(value)) return value.length === 0 || value.some(holdsUnassigned);
  if (typeof value !== "object") return false;
  let empty = true;
  for (const inner of Object.values(value)) {
    empty = false;
    if (holdsUnassigned(inner)) return true;
  }
  return empty;
}

function stripUnassigned(value: unknown): unknown {
  if (value === null || value === undefined) return undefined;
  if (Array.isArray(value)) {
    const items = value.map(stripUnassigned).filter((v) => v !== undefined);
    return items.length ? items : undefined;
  }
  if (typeof value === "object") {
    const entries = Object.entries(value).flatMap(([k, v]) => {
      const assigned = stripUnassigned(v);
      return assigned === undefined ? [] : [[k, assigned] as const];
    });
    return entries.length ? Object.fromEntries(entries) : undefined;
  }
  return value;
}

function toInfo(a: ScimmyAttribute): AttributeInfo {
  return {
    name: a.name,
    type: a.type as AttributeInfo["type"],
    multiValued: Boolean(a.config.multiValued),
    caseExact: Boolean(a.config.caseExact),
    mutability: String(
      a.config.mutable === false
        ? "readOnly"
        : a.config.mutable === true
          ? "readWrite"
          : (a.config.mutable ?? "readWrite"),
    ),
    subAttributes: a.subAttributes?.map(toInfo),
  };
}

const META: AttributeInfo = {
  name: "meta",
  type: "complex",
  multiValued: false,
  caseExact: false,
  mutability: "readOnly",
  subAttributes: ["resourceType", "location", "version"]
    .map((name): AttributeInfo => ({
      name,
      type: "string",
      multiValued: false,
      caseExact: true,
      mutability: "readOnly",
    }))
    .concat(
      ["created", "lastModified"].map((name) => ({
        name,
        type: "dateTime",
        multiValued: false,
        caseExact: false,
        mutability: "readOnly",
      })),
    ),
};
const ID: AttributeInfo = { name: "id", type: "string", multiValued: false, caseExact: true, mutability: "readOnly" };
const EXTERNAL_ID: AttributeInfo = {
  name: "externalId",
  type: "string",
  multiValued: false,
  caseExact: true,
  mutability: "readWrite",
};

export type SchemaInfo = { urn: string; attributes: Map<string, AttributeInfo> };

function schemaInfo(urn: string, definition: ScimmyDefinition, common: boolean): SchemaInfo {
  const attributes = new Map<string, AttributeInfo>();
  for (const a of definition.attributes) {
    if (COMMON.has(a.name) || a.name.startsWith("urn:")) continue;
    attributes.set(a.name.toLowerCase(), toInfo(a));
  }
  if (common) for (const a of [ID, EXTERNAL_ID, META]) attributes.set(a.name.toLowerCase(), a);
  return { urn, attributes };
}

/** The schemas of each resource type: the core schema first, then its extensions. */
export const RESOURCE_SCHEMAS: Record<ResourceKind, SchemaInfo[]> = {
  User: [
    schemaInfo(USER_SCHEMA, copyOf(SCIMMY.Schemas.User.definition), true),
    schemaInfo(ENTERPRISE_SCHEMA, copyOf(SCIMMY.Schemas.EnterpriseUser.definition), false),
  ],
  Group: [schemaInfo(GROUP_SCHEMA, groupDefinition, true)],
};

export type ResolvedAttribute = {
  /** The extension URN when the attribute lives in an extension, else undefined (core). */
  extension?: string;
  attribute: AttributeInfo;
  sub?: AttributeInfo;
};

/**
 * Resolves `name`, `name.sub`, `urn:...:name` or `urn:...:name.sub` (case-insensitively) to
 * schema metadata; undefined when the resource type has no such attribute.
 */
export function resolveAttribute(kind: ResourceKind, path: string): ResolvedAttribute | undefined {
  const schemas = RESOURCE_SCHEMAS[kind];
  let schema = schemas[0]!;
  let rest = path;
  if (/^urn:/i.test(path)) {
    const match = schemas.find((s) => path.toLowerCase().startsWith(`${s.urn.toLowerCase()}:`));
    if (!match) return undefined;
    schema = match;
    rest = path.slice(match.urn.length + 1);
  }
  const [name, subName, ...extra] = rest.split(".");
  if (!name || extra.length) return undefined;
  const attribute = schema.attributes.get(name.toLowerCase());
  if (!attribute) return undefined;
  const extension = schema === schemas[0] ? undefined : schema.urn;
  if (subName === undefined) return { extension, attribute };
  const sub = attribute.subAttributes?.find((s) => s.name.toLowerCase() === subName.toLowerCase());
  return sub ? { extension, attribute, sub } : undefined;
}

/** Sub-attribute metadata of a complex attribute, by name (case-insensitive). */
export function subAttribute(parent: AttributeInfo, name: string): AttributeInfo | undefined {
  return parent.subAttributes?.find((s) => s.name.toLowerCase() === name.toLowerCase());
}

/** Schema descriptions for /Schemas (scimmy's own, with their suggested canonical values). */
export function describeSchemas(baseUrl: string): Record<string, unknown>[] {
  return [
    SCIMMY.Schemas.User.definition,
    SCIMMY.Schemas.EnterpriseUser.definition,
    SCIMMY.Schemas.Group.definition,
  ].map((d) => {
    const description = JSON.parse(JSON.stringify(d.describe())) as Record<string, unknown>;
    // id, externalId and meta are common attributes (RFC 7643 3.1), not part of a schema's own list.
    description.attributes = (description.attributes as { name: string }[]).filter((a) => !COMMON.has(a.name));
    description.meta = { resourceType: "Schema", location: `${baseUrl}/Schemas/${d.id}` };
    return description;
  });
}
