import { BadRequestError } from "../../errors.js";

/** Query parameters of a SCIM list or read (RFC 7644 3.4.2 and 3.9), validated. */
export type ListParams = {
  filter?: string;
  startIndex: number;
  count: number;
  attributes?: string;
  excludedAttributes?: string;
};

export const DEFAULT_PAGE_SIZE = 100;
const INTEGER = /^[+-]?\d{1,12}$/;

type Query = Record<string, unknown>;

/** Query parameter by name, case-insensitively; repeated parameters are an error for single-valued ones. */
function single(query: Query, name: string): string | undefined {
  const lower = name.toLowerCase();
  const key = Object.keys(query).find((k) => k.toLowerCase() === lower);
  if (key === undefined) return undefined;
  const value = query[key];
  if (typeof value === "string") return value;
  throw new BadRequestError(`Query parameter '${name}' must be given once`, name === "filter" ? "invalidFilter" : "invalidValue");
}

function integer(query: Query, name: string): number | undefined {
  const raw = single(query, name)?.trim();
  if (raw === undefined || raw === "") return undefined;
  if (!INTEGER.test(raw)) throw new BadRequestError(`Query parameter '${name}' must be an integer`, "invalidValue");
  return Number(raw);
}

function list(query: Query, name: string): string | undefined {
  const lower = name.toLowerCase();
  const key = Object.keys(query).find((k) => k.toLowerCase() === lower);
  const value = key === undefined ? undefined : query[key];
  if (Array.isArray(value)) return value.filter((v) => typeof v === "string").join(",") || undefined;
  return typeof value === "string" && value.trim() ? value : undefined;
}

export function parseProjectionParams(query: Query): Pick<ListParams, "attributes" | "excludedAttributes"> {
  return { attributes: list(query, "attributes"), excludedAttributes: list(query, "excludedAttributes") };
}

/** startIndex below 1 is 1 and a negative count is 0 (RFC 7644 3.4.2.4); count is capped at `maxPageSize`. */
export function parseListParams(query: Query, maxPageSize: number): ListParams {
  const filter = single(query, "filter");
  const startIndex = Math.max(1, integer(query, "startIndex") ?? 1);
  const count = Math.min(maxPageSize, Math.max(0, integer(query, "count") ?? Math.min(DEFAULT_PAGE_SIZE, maxPageSize)));
  return { filter: filter?.trim() ? filter : undefined, startIndex, count, ...parseProjectionParams(query) };
}
