import { BadRequestError } from "../errors.js";
import { parsePatchPath, type Filter } from "./filter.js";
import { matchesFilter } from "./filterEval.js";
import { coerceBoolean, extensionNamed, isManager, normaliseManager, type PatchOperation } from "./idpQuirks.js";
import { resolveAttribute, subAttribute, type AttributeInfo, type ResourceKind } from "./schemas.js";
import { isRecord } from "../json.js";

/**
 * Applies normalised PATCH operations (RFC 7644 3.5.2) to a stored resource held as plain JSON,
 * returning a new object; the caller validates the result against the schema. Group members
 * never come here: they are rows, changed by `membershipChanges` below.
 */

type Json = Record<string, unknown>;

const sameValue = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Finds the stored key for a canonical attribute name (stored resources use schema case). */
function keyIn(container: Json, name: string): string {
  if (name in container) return name;
  const lower = name.toLowerCase();
  return Object.keys(container).find((k) => k.toLowerCase() === lower) ?? name;
}

export function applyPatch(kind: ResourceKind, resource: Json, operations: PatchOperation[]): Json {
  const result = structuredClone(resource);
  for (const operation of operations) applyOne(kind, result, operation);
  return result;
}

function applyOne(kind: ResourceKind, resource: Json, operation: PatchOperation): void {
  // Only `remove` reaches here with a whole extension as its path (idpQuirks expands the rest).
  const wholeExtension = extensionNamed(kind, operation.path!);
  if (wholeExtension) {
    delete resource[keyIn(resource, wholeExtension)];
    return;
  }
  const { path, filter, subAttribute: subName } = parsePatchPath(operation.path!);
  const resolved = resolveAttribute(kind, path);
  if (!resolved) {
    if (operation.lenient) return;
    throw new BadRequestError(`Unknown attribute '${path}' in PATCH path`, "invalidPath");
  }
  const { extension, attribute } = resolved;
  if (attribute.mutability === "readOnly" || attribute.name === "id" || attribute.name === "meta") {
    if (operation.lenient) return;
    throw new BadRequestError(`'${attribute.name}' is read-only`, "mutability");
  }
  if (isActive(extension, attribute) && !resolved.sub && (operation.op === "remove" || operation.value === null)) {
    // Unassigned `active` reads as true, so removing it would quietly re-enable a deactivated user.
    throw new BadRequestError("'active' cannot be removed or set to null: replace it with true or false", "mutability");
  }
  let container = resource;
  if (extension) {
    const existing = resource[keyIn(resource, extension)];
    container = isRecord(existing) ? existing : {};
    resource[keyIn(resource, extension)] = container;
  }
  const key = keyIn(container, attribute.name);
  let sub = resolved.sub;
  if (subName) {
    if (sub) throw new BadRequestError(`Invalid PATCH path '${operation.path}'`, "invalidPath");
    sub = subAttribute(attribute, subName);
    if (!sub) throw new BadRequestError(`'${attribute.name}' has no sub-attribute '${subName}'`, "invalidPath");
  }

  let value = operation.value;
  if (isManager(extension, attribute) && !sub && operation.op !== "remove") {
    value = normaliseManager(value);
    if (value === undefined) {
      delete container[key];
      return;
    }
  }
  value = coerceBoolean(sub ?? attribute, value);

  if (filter) return applyFiltered(container, key, attribute, filter, sub, operation.op, value);
  if (sub) return applySub(container, key, attribute, sub, operation.op, value);
  applyWhole(container, key, attribute, operation.op, value);
}

const isActive = (extension: string | undefined, attribute: AttributeInfo) => !extension && attribute.name === "active";

function applyWhole(
  container: Json,
  key: string,
  attribute: AttributeInfo,
  op: PatchOperation["op"],
  value: unknown,
): void {
  const current = container[key];
  if (op === "remove") {
    // A value list on remove names the elements to take out (Entra's member and email removal).
    if (attribute.multiValued && Array.isArray(current) && value !== undefined && value !== null) {
      const doomed = (Array.isArray(value) ? value : [value]).map((v) => (isRecord(v) ? (v.value ?? v.Value) : v));
      container[key] = current.filter(
        (el) => !doomed.some((d) => sameValue(isRecord(el) ? el.value : el, d) || sameValue(el, d)),
      );
    } else {
      delete container[key];
    }
    return;
  }
  if (value === null) {
    delete container[key];
    return;
  }
  if (attribute.multiValued) {
    const incoming = Array.isArray(value) ? value : [value];
    if (op === "replace") container[key] = incoming;
    else {
      const existing = Array.isArray(current) ? [...current] : [];
      for (const item of incoming) if (!existing.some((e) => sameValue(e, item))) existing.push(item);
      container[key] = existing;
    }
    return;
  }
  if (attribute.type === "complex" && isRecord(value)) {
    // RFC 7644 3.5.2.3: sub-attributes not named in the value are left unchanged.
    container[key] = { ...(isRecord(current) ? current : {}), ...value };
    return;
  }
  container[key] = value;
}

function applySub(
  container: Json,
  key: string,
  attribute: AttributeInfo,
  sub: AttributeInfo,
  op: PatchOperation["op"],
  value: unknown,
): void {
  const current = container[key];
  if (attribute.multiValued) {
    const elements = Array.isArray(current) ? current.filter(isRecord) : [];
    if (op === "remove") elements.forEach((el) => delete el[keyIn(el, sub.name)]);
    else if (elements.length) elements.forEach((el) => (el[keyIn(el, sub.name)] = value));
    else elements.push({ [sub.name]: value });
    container[key] = elements;
    return;
  }
  const object = isRecord(current) ? current : {};
  if (op === "remove" || value === null) delete object[keyIn(object, sub.name)];
  else object[keyIn(object, sub.name)] = value;
  container[key] = object;
}

function applyFiltered(
  container: Json,
  key: string,
  attribute: AttributeInfo,
  filter: Filter,
  sub: AttributeInfo | undefined,
  op: PatchOperation["op"],
  value: unknown,
): void {
  if (!attribute.multiValued || attribute.type !== "complex")
    throw new BadRequestError(`'${attribute.name}' is not a multi-valued complex attribute`, "invalidPath");
  const elements = (Array.isArray(container[key]) ? (container[key] as unknown[]) : []).filter(isRecord);
  const matching = elements.filter((el) => matchesFilter(el, filter));
  if (op === "remove") {
    if (sub) matching.forEach((el) => delete el[keyIn(el, sub.name)]);
    container[key] = sub ? elements : elements.filter((el) => !matching.includes(el));
    return;
  }
  if (!matching.length) {
    // Entra replaces `emails[type eq "work"].value` on users that have no work email yet: create it.
    const seed = equalitiesOf(filter);
    if (!seed) throw new BadRequestError(`No '${attribute.name}' value matches the PATCH filter`, "noTarget");
    elements.push(sub ? { ...seed, [sub.name]: value } : { ...seed, ...(isRecord(value) ? value : {}) });
  } else if (sub) {
    matching.forEach((el) => (el[keyIn(el, sub.name)] = value));
  } else {
    if (!isRecord(value))
      throw new BadRequestError(`The value for '${attribute.name}[...]' must be an object`, "invalidValue");
    for (const el of matching) {
      if (op === "replace") for (const k of Object.keys(el)) delete el[k];
      Object.assign(el, value);
    }
  }
  container[key] = elements;
}

/** `type eq "work" and primary eq true` → {type: "work", primary: true}; undefined for anything else. */
function equalitiesOf(filter: Filter): Json | undefined {
  if (filter.kind === "compare" && filter.op === "eq" && !filter.path.includes("."))
    return { [filter.path]: filter.value };
  if (filter.kind === "and") {
    const left = equalitiesOf(filter.left);
    const right = equalitiesOf(filter.right);
    return left && right ? { ...left, ...right } : undefined;
  }
  return undefined;
}

export type MemberRef = { id: string; display?: string };

/** One row-level change to a group's membership, in request order. */
export type MembershipChange =
  | { kind: "add"; members: MemberRef[] }
  | { kind: "remove"; ids: string[] }
  | { kind: "removeWhere"; filter: Filter }
  | { kind: "removeAll" }
  | { kind: "replace"; members: MemberRef[] };

export function memberRefs(value: unknown): MemberRef[] {
  if (value === null || value === undefined) return [];
  const items = Array.isArray(value) ? value : [value];
  return items.flatMap((item): MemberRef[] => {
    // A bare string is taken as the member id (seen from test clients; skipped if unknown).
    if (typeof item === "string") return [{ id: item }];
    if (!isRecord(item)) throw new BadRequestError("Each member must be an object with a value", "invalidValue");
    const id = item.value ?? item.Value;
    if (typeof id !== "string")
      throw new BadRequestError("Each member needs a string value (the user id)", "invalidValue");
    const display = item.display ?? item.Display ?? item.displayName;
    return [{ id, display: typeof display === "string" ? display : undefined }];
  });
}

/** `value eq "a" or value eq "b"` → ["a", "b"]; undefined for any other member filter. */
function memberIdsOf(filter: Filter): string[] | undefined {
  if (
    filter.kind === "compare" &&
    filter.op === "eq" &&
    filter.path.toLowerCase() === "value" &&
    typeof filter.value === "string"
  )
    return [filter.value];
  if (filter.kind === "or") {
    const left = memberIdsOf(filter.left);
    const right = memberIdsOf(filter.right);
    return left && right ? [...left, ...right] : undefined;
  }
  return undefined;
}

/** Splits a group PATCH into the membership changes and the ops on the group's own attributes. */
export function splitGroupPatch(operations: PatchOperation[]): {
  attributeOps: PatchOperation[];
  membership: MembershipChange[];
} {
  const attributeOps: PatchOperation[] = [];
  const membership: MembershipChange[] = [];
  for (const operation of operations) {
    const { path, filter, subAttribute: sub } = parsePatchPath(operation.path!);
    if (path.toLowerCase() !== "members") {
      attributeOps.push(operation);
      continue;
    }
    if (sub)
      throw new BadRequestError("Member sub-attributes are immutable: add or remove the member instead", "mutability");
    if (filter) {
      if (operation.op !== "remove")
        throw new BadRequestError(
          "Use add on 'members' to add members; a member filter only applies to remove",
          "invalidPath",
        );
      const ids = memberIdsOf(filter);
      membership.push(ids ? { kind: "remove", ids } : { kind: "removeWhere", filter });
    } else if (operation.op === "add") {
      membership.push({ kind: "add", members: memberRefs(operation.value) });
    } else if (operation.op === "replace") {
      membership.push({ kind: "replace", members: memberRefs(operation.value) });
    } else {
      const refs = memberRefs(operation.value);
      membership.push(refs.length ? { kind: "remove", ids: refs.map((r) => r.id) } : { kind: "removeAll" });
    }
  }
  return { attributeOps, membership };
}
