import { BadRequestError } from "../errors.js";
import { parseFilter, splitAttributeList, type Filter } from "./filter.js";
import { matchesFilter } from "./filterEval.js";
import { extensionNamed } from "./idpQuirks.js";
import { resolveAttribute, type ResourceKind } from "./schemas.js";
import { isRecord } from "../json.js";

/**
 * `attributes` and `excludedAttributes` (RFC 7644 3.9) applied to a presented resource.
 * `id` and `schemas` are always returned. An item may carry a value filter
 * (`emails[type eq "work"]`), which keeps only the matching elements.
 */

/** `name` undefined: the whole extension (`attributes=urn:...:enterprise:2.0:User`). */
type Item = { extension?: string; name?: string; sub?: string; filter?: Filter };
export type Projection = { mode: "all" } | { mode: "include" | "exclude"; items: Item[] };

const ALL_ATTRIBUTES: Projection = { mode: "all" };

function parseItems(kind: ResourceKind, raw: string): Item[] {
  return splitAttributeList(raw).flatMap((text): Item[] => {
    const bracket = text.indexOf("[");
    const path = bracket >= 0 ? text.slice(0, bracket) : text;
    let filter: Filter | undefined;
    if (bracket >= 0) {
      if (!text.endsWith("]")) throw new BadRequestError(`Invalid attribute '${text.slice(0, 100)}'`, "invalidValue");
      filter = parseFilter(text.slice(bracket + 1, -1));
    }
    const extension = extensionNamed(kind, path.trim());
    if (extension && !filter) return [{ extension }];
    const resolved = resolveAttribute(kind, path.trim());
    // Unknown names select nothing, like an attribute the resource does not have.
    if (!resolved) return [];
    return [{ extension: resolved.extension, name: resolved.attribute.name, sub: resolved.sub?.name, filter }];
  });
}

export function parseProjection(
  kind: ResourceKind,
  attributes: string | undefined,
  excluded: string | undefined,
): Projection {
  if (attributes) return { mode: "include", items: parseItems(kind, attributes) };
  if (excluded) return { mode: "exclude", items: parseItems(kind, excluded) };
  return ALL_ATTRIBUTES;
}

/** Whether the projection can return `name` at all (lets handlers skip loading group members). */
export function projects(projection: Projection, name: string): boolean {
  if (projection.mode === "all") return true;
  const named = projection.items.some((i) => !i.extension && i.name === name);
  return projection.mode === "include"
    ? named
    : !projection.items.some((i) => !i.extension && i.name === name && !i.sub);
}

type Json = Record<string, unknown>;

function pick(source: Json, item: Item): unknown {
  const container = item.extension ? source[item.extension] : source;
  if (!isRecord(container)) return undefined;
  if (item.name === undefined) return container;
  let value = container[item.name];
  if (value === undefined) return undefined;
  if (item.filter && Array.isArray(value)) value = value.filter((el) => matchesFilter(el, item.filter!));
  if (!item.sub) return value;
  if (Array.isArray(value)) {
    const subs = value
      .filter(isRecord)
      .map((el) => (el[item.sub!] === undefined ? undefined : { [item.sub!]: el[item.sub!] }));
    return subs.filter(Boolean);
  }
  return isRecord(value) && value[item.sub] !== undefined ? { [item.sub]: value[item.sub] } : undefined;
}

function merge(target: Json, key: string, value: unknown): void {
  const existing = target[key];
  if (isRecord(existing) && isRecord(value)) target[key] = { ...existing, ...value };
  else target[key] = value;
}

export function project(resource: Json, projection: Projection): Json {
  if (projection.mode === "all") return resource;
  if (projection.mode === "include") {
    const out: Json = { schemas: resource.schemas, id: resource.id };
    for (const item of projection.items) {
      const value = pick(resource, item);
      if (value === undefined) continue;
      if (item.name === undefined)
        out[item.extension!] = { ...(out[item.extension!] as Json | undefined), ...(value as Json) };
      else if (item.extension) {
        const ext = (isRecord(out[item.extension]) ? out[item.extension] : {}) as Json;
        merge(ext, item.name, value);
        out[item.extension] = ext;
      } else merge(out, item.name, value);
    }
    return out;
  }
  const out = structuredClone(resource);
  for (const item of projection.items) {
    if (item.name === "id" && !item.extension) continue;
    if (item.name === undefined) {
      delete out[item.extension!];
      if (Array.isArray(out.schemas)) out.schemas = out.schemas.filter((urn) => urn !== item.extension);
      continue;
    }
    const container = item.extension ? out[item.extension] : out;
    if (!isRecord(container)) continue;
    if (!item.sub) delete container[item.name];
    else {
      const value = container[item.name];
      if (Array.isArray(value)) value.filter(isRecord).forEach((el) => delete el[item.sub!]);
      else if (isRecord(value)) delete value[item.sub];
    }
  }
  return out;
}
