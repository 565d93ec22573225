import { BadRequestError } from "../../errors.js";
import type { CompareOp, Filter, FilterValue } from "../../scim/filter.js";
import {
  ENTERPRISE_SCHEMA,
  resolveAttribute,
  subAttribute,
  type AttributeInfo,
  type ResourceKind,
} from "../../scimAttributes.js";
import { isUuid } from "../../ids.js";

/**
 * Compiles a parsed SCIM filter into a parameterised SQL condition over `idp_users u` or
 * `idp_groups g`. Attributes with their own column use it (and its index: userName compares as
 * lower(user_name), like the unique index); everything else reads the stored jsonb resource.
 * Values only ever travel as parameters; attribute names come from the schema, never the client.
 *
 * Past ~300 lines: one compiler, whose operator cases belong together (table-tested).
 */

export type SqlCondition = { sql: string; params: unknown[] };

type LeafType = AttributeInfo["type"] | "uuid";
/** One comparable thing: a text expression and, for jsonb-backed leaves, the jsonb expression. */
type Leaf = { text: string; json?: string; type: LeafType; caseExact: boolean; native: boolean };

type Columns = Record<string, Leaf>;

const column = (text: string, type: LeafType, caseExact = false): Leaf => ({ text, type, caseExact, native: true });

const USER_COLUMNS: Columns = {
  id: column("u.id", "uuid", true),
  externalid: column("u.external_id", "string", true),
  username: column("u.user_name", "string"),
  displayname: column("u.display_name", "string"),
  active: column("u.active", "boolean"),
  "name.givenname": column("u.given_name", "string"),
  "name.familyname": column("u.family_name", "string"),
  [`${ENTERPRISE_SCHEMA}:department`.toLowerCase()]: column("u.department", "string"),
  "meta.created": column("u.created_at", "dateTime"),
  "meta.lastmodified": column("u.updated_at", "dateTime"),
  "meta.resourcetype": column("'User'::text", "string", true),
};

const GROUP_COLUMNS: Columns = {
  id: column("g.id", "uuid", true),
  externalid: column("g.external_id", "string", true),
  displayname: column("g.display_name", "string"),
  "meta.created": column("g.created_at", "dateTime"),
  "meta.lastmodified": column("g.updated_at", "dateTime"),
  "meta.resourcetype": column("'Group'::text", "string", true),
};

const MEMBER_COLUMNS: Columns = {
  value: column("m.user_id", "uuid", true),
  display: column("m.display", "string"),
  type: column("'User'::text", "string", true),
};

const SAFE_KEY = /^[A-Za-z0-9:._$-]+$/;

function invalid(message: string): BadRequestError {
  return new BadRequestError(message, "invalidFilter");
}

/** A JSON key from the schema, as a SQL string literal. Schema names only; asserted safe. */
function key(name: string): string {
  if (!SAFE_KEY.test(name)) throw new Error(`unsafe attribute key ${name}`);
  return `'${name}'`;
}

class Compiler {
  readonly params: unknown[] = [];
  /** Root attributes this resource type does not have (only collected when they are read as unassigned). */
  readonly unknownPaths = new Set<string>();
  private aliases = 0;

  constructor(
    private readonly kind: ResourceKind,
    private readonly offset: number,
    private readonly unknownAsUnassigned: boolean,
  ) {}

  /** An attribute the resource type lacks, read as unassigned: only `eq null` holds (RFC 7644 3.4.2.2). */
  private unassigned(filter: Extract<Filter, { kind: "present" | "compare" | "valuePath" }>): string {
    this.unknownPaths.add(filter.path.toLowerCase());
    return filter.kind === "compare" && filter.op === "eq" && filter.value === null ? "true" : "false";
  }

  private param(value: unknown): string {
    this.params.push(value);
    return `$${this.offset + this.params.length}`;
  }

  private alias(): string {
    return `e${++this.aliases}`;
  }

  compile(filter: Filter): string {
    switch (filter.kind) {
      case "and":
      case "or":
        return `(${this.compile(filter.left)} ${filter.kind.toUpperCase()} ${this.compile(filter.right)})`;
      case "not":
        return `(NOT COALESCE(${this.compile(filter.filter)}, false))`;
      case "present":
      case "compare":
      case "valuePath":
        if (this.unknownAsUnassigned && !resolveAttribute(this.kind, filter.path)) return this.unassigned(filter);
        if (filter.kind === "valuePath") return this.atRoot(filter.path, undefined, false, filter.filter);
        return this.atRoot(filter.path, (leaf) => this.leafCondition(leaf, filter), filter.kind === "present");
    }
  }

  /** Resolves a root attribute path and builds its condition, descending into multi-valued attributes. */
  private atRoot(
    path: string,
    onLeaf: ((leaf: Leaf) => string) | undefined,
    present: boolean,
    valueFilter?: Filter,
  ): string {
    const resolved = resolveAttribute(this.kind, path);
    if (!resolved) throw invalid(`Unknown attribute '${path}' in filter`);
    const { extension, attribute, sub } = resolved;
    const prefix = extension ? `${extension}:` : "";
    const name = `${prefix}${attribute.name}${sub ? `.${sub.name}` : ""}`.toLowerCase();
    const columns = this.kind === "User" ? USER_COLUMNS : GROUP_COLUMNS;

    if (columns[name] && onLeaf && !valueFilter) return onLeaf(columns[name]);

    if (this.kind === "Group" && attribute.name === "members") {
      const exists = (inner: string) =>
        `EXISTS (SELECT 1 FROM idp_group_members m WHERE m.group_id = g.id AND ${inner})`;
      if (valueFilter) return exists(this.inElement(valueFilter, (n) => MEMBER_COLUMNS[n.toLowerCase()]));
      if (!sub && present) return exists("true");
      const leaf = MEMBER_COLUMNS[(sub?.name ?? "value").toLowerCase()];
      if (!leaf || !onLeaf) throw invalid(`Cannot filter on '${path}'`);
      return exists(onLeaf(leaf));
    }

    if (attribute.name === "meta" || attribute.name === "id") throw invalid(`Cannot filter on '${path}'`);
    const base = extension ? `${this.root()}->${key(extension)}` : this.root();
    const json = `${base}->${key(attribute.name)}`;

    if (attribute.multiValued) {
      const element = this.alias();
      const elements = `jsonb_array_elements(CASE WHEN jsonb_typeof(${json}) = 'array' THEN ${json} ELSE '[]'::jsonb END) AS ${element}`;
      const exists = (inner: string) => `EXISTS (SELECT 1 FROM ${elements} WHERE ${inner})`;
      if (valueFilter) {
        if (attribute.type !== "complex") throw invalid(`'${path}' has no sub-attributes to filter on`);
        return exists(this.inElement(valueFilter, (n) => elementLeaf(element, attribute, n)));
      }
      if (!sub && present) return this.presentJson(json);
      if (attribute.type !== "complex") {
        return exists(
          onLeaf!({
            text: `(${element} #>> '{}')`,
            json: element,
            type: attribute.type,
            caseExact: attribute.caseExact,
            native: false,
          }),
        );
      }
      const leaf = elementLeaf(element, attribute, sub?.name ?? "value");
      if (!leaf) throw invalid(`Cannot filter on '${path}' without a sub-attribute`);
      return exists(onLeaf!(leaf));
    }

    if (valueFilter) {
      if (attribute.type !== "complex") throw invalid(`'${path}' has no sub-attributes to filter on`);
      return `(${this.inElement(valueFilter, (n) => elementLeaf(json, attribute, n))})`;
    }
    if (sub) {
      const subJson = `${json}->${key(sub.name)}`;
      return onLeaf!({
        text: `(${json}->>${key(sub.name)})`,
        json: subJson,
        type: sub.type,
        caseExact: sub.caseExact,
        native: false,
      });
    }
    if (attribute.type === "complex") {
      if (present) return this.presentJson(json);
      throw invalid(`'${path}' is complex: name a sub-attribute`);
    }
    return onLeaf!({
      text: `(${base}->>${key(attribute.name)})`,
      json,
      type: attribute.type,
      caseExact: attribute.caseExact,
      native: false,
    });
  }

  private root(): string {
    return this.kind === "User" ? "u.resource" : "g.resource";
  }

  /** Compiles a value filter whose attribute names are sub-attributes of one element. */
  private inElement(filter: Filter, leafOf: (name: string) => Leaf | undefined): string {
    switch (filter.kind) {
      case "and":
      case "or":
        return `(${this.inElement(filter.left, leafOf)} ${filter.kind.toUpperCase()} ${this.inElement(filter.right, leafOf)})`;
      case "not":
        return `(NOT COALESCE(${this.inElement(filter.filter, leafOf)}, false))`;
      case "valuePath":
        throw invalid("Value filters cannot be nested");
      case "present":
      case "compare": {
        const leaf = leafOf(filter.path);
        if (!leaf) throw invalid(`Unknown sub-attribute '${filter.path}' in value filter`);
        return this.leafCondition(leaf, filter);
      }
    }
  }

  private presentJson(json: string): string {
    return `(${json} IS NOT NULL AND ${json} NOT IN ('null'::jsonb, '""'::jsonb, '[]'::jsonb, '{}'::jsonb))`;
  }

  private leafCondition(leaf: Leaf, filter: Extract<Filter, { kind: "present" | "compare" }>): string {
    if (filter.kind === "present") {
      if (!leaf.native) return this.presentJson(leaf.json!);
      return leaf.type === "string"
        ? `(${leaf.text} IS NOT NULL AND ${leaf.text} <> '')`
        : `(${leaf.text} IS NOT NULL)`;
    }
    const { op, value } = filter;
    if (value === null) {
      if (op === "eq")
        return `(NOT COALESCE(${this.leafCondition(leaf, { kind: "present", path: filter.path })}, false))`;
      if (op === "ne") return this.leafCondition(leaf, { kind: "present", path: filter.path });
      throw invalid(`Operator '${op}' cannot compare with null`);
    }
    if (op === "ne") return `(NOT COALESCE(${this.compare(leaf, "eq", value, filter.path)}, false))`;
    return this.compare(leaf, op, value, filter.path);
  }

  private compare(leaf: Leaf, op: CompareOp, value: Exclude<FilterValue, null>, path: string): string {
    const ordering: Partial<Record<CompareOp, string>> = { eq: "=", gt: ">", ge: ">=", lt: "<", le: "<=" };
    switch (leaf.type) {
      case "boolean": {
        if (typeof value !== "boolean") throw invalid(`'${path}' is boolean: compare it with true or false`);
        if (op !== "eq") throw invalid(`'${path}' is boolean: only eq and ne apply`);
        return leaf.native
          ? `(${leaf.text} = ${this.param(value)}::boolean)`
          : `(${leaf.json} = ${this.param(JSON.stringify(value))}::jsonb)`;
      }
      case "decimal":
      case "integer": {
        if (typeof value !== "number") throw invalid(`'${path}' is a number: compare it with a number`);
        const sqlOp = ordering[op];
        if (!sqlOp) throw invalid(`Operator '${op}' does not apply to the number '${path}'`);
        return `((CASE WHEN jsonb_typeof(${leaf.json}) = 'number' THEN (${leaf.json})::text::numeric END) ${sqlOp} ${this.param(value)}::numeric)`;
      }
      case "dateTime": {
        const time = typeof value === "string" ? Date.parse(value) : NaN;
        if (Number.isNaN(time)) throw invalid(`'${path}' is a dateTime: compare it with a quoted ISO 8601 time`);
        const sqlOp = ordering[op];
        if (!sqlOp) throw invalid(`Operator '${op}' does not apply to the dateTime '${path}'`);
        const iso = new Date(time).toISOString();
        return leaf.native
          ? `(${leaf.text} ${sqlOp} ${this.param(iso)}::timestamptz)`
          : `(${leaf.text} ${sqlOp} ${this.param(iso)}::text)`;
      }
      case "uuid": {
        if (typeof value !== "string") throw invalid(`'${path}' is a string: compare it with a quoted string`);
        // An id that is not a UUID matches nothing; comparing as uuid keeps the primary-key index.
        if (op === "eq") return isUuid(value) ? `(${leaf.text} = ${this.param(value)}::uuid)` : "false";
        return this.compareText(`${leaf.text}::text`, false, op, value);
      }
      case "complex":
        throw invalid(`'${path}' is complex: name a sub-attribute`);
      default:
        if (typeof value !== "string") throw invalid(`'${path}' is a string: compare it with a quoted string`);
        return this.compareText(leaf.text, leaf.caseExact, op, value);
    }
  }

  private compareText(text: string, caseExact: boolean, op: CompareOp, value: string): string {
    const p = this.param(value);
    const a = caseExact ? text : `lower(${text})`;
    const b = caseExact ? `${p}::text` : `lower(${p}::text)`;
    switch (op) {
      case "co":
        return `(strpos(${a}, ${b}) > 0)`;
      case "sw":
        return `starts_with(${a}, ${b})`;
      case "ew":
        return `(right(${a}, length(${p}::text)) = ${b})`;
      case "eq":
        return `(${a} = ${b})`;
      case "gt":
        return `(${a} > ${b})`;
      case "ge":
        return `(${a} >= ${b})`;
      case "lt":
        return `(${a} < ${b})`;
      case "le":
        return `(${a} <= ${b})`;
      default:
        throw invalid(`Unsupported operator '${op}'`);
    }
  }
}

function elementLeaf(element: string, parent: AttributeInfo, name: string): Leaf | undefined {
  const sub = subAttribute(parent, name);
  if (!sub) return undefined;
  return {
    text: `(${element}->>${key(sub.name)})`,
    json: `${element}->${key(sub.name)}`,
    type: sub.type,
    caseExact: sub.caseExact,
    native: false,
  };
}

/** SQL condition for `filter`; parameters are numbered from `$${offset + 1}`. */
export function filterToSql(kind: ResourceKind, filter: Filter, offset = 0): SqlCondition {
  const compiler = new Compiler(kind, offset, false);
  const sql = compiler.compile(filter);
  return { sql, params: compiler.params };
}

/**
 * For a search across resource types (POST /.search): an attribute this type does not have is
 * unassigned rather than an error; `unknownPaths` lists them so the caller can reject a filter
 * that no type understands.
 */
export function filterToSqlAcross(
  kind: ResourceKind,
  filter: Filter,
  offset: number,
): SqlCondition & { unknownPaths: Set<string> } {
  const compiler = new Compiler(kind, offset, true);
  const sql = compiler.compile(filter);
  return { sql, params: compiler.params, unknownPaths: compiler.unknownPaths };
}
