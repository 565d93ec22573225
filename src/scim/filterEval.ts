import type { Filter, FilterValue } from "./filter.js";

/**
 * Evaluates a value filter against one element of a multi-valued attribute in memory (PATCH
 * paths such as `emails[type eq "work"]`, and `attributes=emails[...]`). Names are matched
 * case-insensitively; strings compare case-insensitively, as most SCIM sub-attributes are
 * caseExact=false. Listing filters never come here: they run as SQL (db/idp/filterSql.ts).
 */

export function getCaseInsensitive(object: unknown, name: string): unknown {
  if (!object || typeof object !== "object" || Array.isArray(object)) return undefined;
  const record = object as Record<string, unknown>;
  if (name in record) return record[name];
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(record)) if (k.toLowerCase() === lower) return v;
  return undefined;
}

function valueAt(element: unknown, path: string): unknown[] {
  let values: unknown[] = [element];
  for (const part of path.split(".")) {
    values = values.flatMap((v) => {
      const inner = getCaseInsensitive(v, part);
      return Array.isArray(inner) ? inner : inner === undefined ? [] : [inner];
    });
  }
  return values;
}

const isPresent = (v: unknown) =>
  v !== null &&
  v !== undefined &&
  v !== "" &&
  !(Array.isArray(v) && !v.length) &&
  !(typeof v === "object" && !Object.keys(v as object).length);

function compareOne(actual: unknown, op: string, expected: FilterValue): boolean {
  if (expected === null) return op === "eq" ? !isPresent(actual) : op === "ne" ? isPresent(actual) : false;
  if (typeof expected === "string" && typeof actual === "string") {
    const a = actual.toLowerCase();
    const b = expected.toLowerCase();
    switch (op) {
      case "eq":
        return a === b;
      case "ne":
        return a !== b;
      case "co":
        return a.includes(b);
      case "sw":
        return a.startsWith(b);
      case "ew":
        return a.endsWith(b);
      case "gt":
        return a > b;
      case "ge":
        return a >= b;
      case "lt":
        return a < b;
      case "le":
        return a <= b;
    }
    return false;
  }
  if (typeof expected === "number" && typeof actual === "number") {
    return (
      {
        eq: actual === expected,
        ne: actual !== expected,
        gt: actual > expected,
        ge: actual >= expected,
        lt: actual < expected,
        le: actual <= expected,
      }[op] ?? false
    );
  }
  if (typeof expected === "boolean")
    return op === "eq" ? actual === expected : op === "ne" ? actual !== expected : false;
  return op === "ne";
}

export function matchesFilter(element: unknown, filter: Filter): boolean {
  switch (filter.kind) {
    case "and":
      return matchesFilter(element, filter.left) && matchesFilter(element, filter.right);
    case "or":
      return matchesFilter(element, filter.left) || matchesFilter(element, filter.right);
    case "not":
      return !matchesFilter(element, filter.filter);
    case "present":
      return valueAt(element, filter.path).some(isPresent);
    case "valuePath":
      return valueAt(element, filter.path).some((inner) => matchesFilter(inner, filter.filter));
    case "compare": {
      const values = valueAt(element, filter.path);
      if (filter.op === "ne") return !values.some((v) => compareOne(v, "eq", filter.value));
      if (!values.length) return compareOne(undefined, filter.op, filter.value);
      return values.some((v) => compareOne(v, filter.op, filter.value));
    }
  }
}
