import { BadRequestError } from "../../errors.js";
import type { SortOrder, SortRequest } from "../../scim/frontDoor.js";

/** Parameters of a SCIM list, search or read (RFC 7644 3.4.2, 3.4.3 and 3.9), validated. */
export type ListParams = {
  filter?: string;
  startIndex: number;
  count: number;
  sort?: SortRequest;
  attributes?: string;
  excludedAttributes?: string;
};

const DEFAULT_PAGE_SIZE = 100;
const INTEGER = /^[+-]?\d{1,12}$/;

type Query = Record<string, unknown>;
/** A query's parameters by lower-cased name (RFC 7644's names are case-insensitive), the first spelling of each. */
type Named = Map<string, unknown>;

function named(query: Query): Named {
  const byName: Named = new Map();
  for (const key of Object.keys(query)) {
    const lower = key.toLowerCase();
    if (!byName.has(lower)) byName.set(lower, query[key]);
  }
  return byName;
}

/** Query parameter by name, case-insensitively; repeated parameters are an error for single-valued ones. */
function single(query: Named, name: string): string | undefined {
  const value = query.get(name.toLowerCase());
  if (value === undefined) return undefined;
  if (typeof value === "string") return value;
  throw new BadRequestError(
    `Query parameter '${name}' must be given once`,
    name === "filter" ? "invalidFilter" : "invalidValue",
  );
}

function integer(query: Named, name: string): number | undefined {
  const raw = single(query, name)?.trim();
  if (raw === undefined || raw === "") return undefined;
  if (!INTEGER.test(raw)) throw new BadRequestError(`Query parameter '${name}' must be an integer`, "invalidValue");
  return Number(raw);
}

function list(query: Named, name: string): string | undefined {
  const value = query.get(name.toLowerCase());
  if (Array.isArray(value)) return value.filter((v) => typeof v === "string").join(",") || undefined;
  return typeof value === "string" && value.trim() ? value : undefined;
}

function projectionOf(query: Named): Pick<ListParams, "attributes" | "excludedAttributes"> {
  return { attributes: list(query, "attributes"), excludedAttributes: list(query, "excludedAttributes") };
}

export function parseProjectionParams(query: Query): Pick<ListParams, "attributes" | "excludedAttributes"> {
  return projectionOf(named(query));
}

/** `sortOrder` without `sortBy` is ignored; without `sortOrder`, ascending (RFC 7644 3.4.2.3). */
function sortOf(sortBy: string | undefined, sortOrder: string | undefined): SortRequest | undefined {
  if (!sortBy?.trim()) return undefined;
  const order = (sortOrder?.trim() || "ascending").toLowerCase();
  if (order !== "ascending" && order !== "descending")
    throw new BadRequestError("sortOrder must be ascending or descending", "invalidValue");
  return { sortBy: sortBy.trim(), sortOrder: order as SortOrder };
}

/** startIndex below 1 is 1 and a negative count is 0 (RFC 7644 3.4.2.4); count is capped at `maxPageSize`. */
function page(
  startIndex: number | undefined,
  count: number | undefined,
  maxPageSize: number,
): Pick<ListParams, "startIndex" | "count"> {
  return {
    startIndex: Math.max(1, startIndex ?? 1),
    count: Math.min(maxPageSize, Math.max(0, count ?? Math.min(DEFAULT_PAGE_SIZE, maxPageSize))),
  };
}

export function parseListParams(query: Query, maxPageSize: number): ListParams {
  const byName = named(query);
  const filter = single(byName, "filter");
  return {
    filter: filter?.trim() ? filter : undefined,
    ...page(integer(byName, "startIndex"), integer(byName, "count"), maxPageSize),
    sort: sortOf(single(byName, "sortBy"), single(byName, "sortOrder")),
    ...projectionOf(byName),
  };
}

const SEARCH_REQUEST_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:SearchRequest";

function bodyMember(body: Query, name: string, type: "string" | "number" | "list"): unknown {
  const key = Object.keys(body).find((k) => k.toLowerCase() === name.toLowerCase());
  const value = key === undefined ? undefined : body[key];
  if (value === undefined || value === null) return undefined;
  if (type === "list" && Array.isArray(value) && value.every((v) => typeof v === "string"))
    return value.join(",") || undefined;
  if (type === "list" && typeof value === "string") return value.trim() ? value : undefined;
  if (type === "number" && Number.isInteger(value) && Math.abs(value as number) < 1e12) return value;
  if (type !== "list" && typeof value === type) return value;
  const expected = type === "list" ? "an array of attribute names" : type === "number" ? "an integer" : "a string";
  throw new BadRequestError(
    `SearchRequest '${name}' must be ${expected}`,
    name === "filter" ? "invalidFilter" : "invalidValue",
  );
}

/** The body of POST .search (RFC 7644 3.4.3): the same parameters as a GET, as JSON members. */
export function parseSearchRequest(body: unknown, maxPageSize: number): ListParams {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw new BadRequestError("The SearchRequest must be a JSON object", "invalidSyntax");
  const request = body as Query;
  const schemas = bodyMember(request, "schemas", "list") as string | undefined;
  if (schemas !== undefined && !schemas.split(",").includes(SEARCH_REQUEST_SCHEMA)) {
    throw new BadRequestError(`A SearchRequest's schemas must be ["${SEARCH_REQUEST_SCHEMA}"]`, "invalidSyntax");
  }
  const filter = bodyMember(request, "filter", "string") as string | undefined;
  return {
    filter: filter?.trim() ? filter : undefined,
    ...page(
      bodyMember(request, "startIndex", "number") as number | undefined,
      bodyMember(request, "count", "number") as number | undefined,
      maxPageSize,
    ),
    sort: sortOf(
      bodyMember(request, "sortBy", "string") as string | undefined,
      bodyMember(request, "sortOrder", "string") as string | undefined,
    ),
    attributes: bodyMember(request, "attributes", "list") as string | undefined,
    excludedAttributes: bodyMember(request, "excludedAttributes", "list") as string | undefined,
  };
}
