import SCIMMY from "scimmy";
import { BadRequestError } from "../errors.js";
import { compileFastPlan, fastCoerce, type FastPlan } from "./fastCoerce.js";
import { COMMON, groupDefinition, userDefinition, type ResourceKind } from "../scimAttributes.js";

export {
  ENTERPRISE_SCHEMA,
  GROUP_SCHEMA,
  RESOURCE_SCHEMAS,
  USER_SCHEMA,
  resolveAttribute,
  subAttribute,
  type AttributeInfo,
  type ResourceKind,
} from "../scimAttributes.js";

/**
 * SCIM schemas (RFC 7643) from scimmy: validation against the definitions and the descriptions
 * served at /Schemas. The definitions and their attribute metadata are src/scimAttributes.ts
 * (re-exported here), below src/db's filter and sort compilers.
 */

export const LIST_RESPONSE_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:ListResponse";
export const ERROR_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:Error";

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
