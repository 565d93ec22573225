import SCIMMY from "scimmy";

/**
 * SCIM resource schemas (RFC 7643) from scimmy, and the attribute metadata read from them: the
 * names the filter and sort compilers (src/db/idp/filterSql.ts, sortSql.ts), the PATCH applier and the
 * projection resolve. Below both src/scim and src/db, which import it; validation against the
 * definitions (coerceResource) and the /Schemas descriptions stay in src/scim/schemas.ts.
 */

export const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";
export const ENTERPRISE_SCHEMA = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
export const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";

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

export const COMMON = new Set(["id", "externalId", "meta", "schemas"]);

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
export const userDefinition = copyOf(SCIMMY.Schemas.User.definition).extend(
  copyOf(SCIMMY.Schemas.EnterpriseUser.definition),
  false,
);
export const groupDefinition = copyOf(SCIMMY.Schemas.Group.definition);

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
