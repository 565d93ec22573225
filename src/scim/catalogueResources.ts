import { BadRequestError } from "../errors.js";
import type { Catalogue, CatalogueEntry } from "../mapping/compiled.js";
import { parseFilter, type Filter } from "./filter.js";
import { matchesFilter } from "./filterEval.js";

/**
 * The catalogue as SCIM resources, for the discovery endpoints /Roles and /Entitlements: entries of
 * type `role` are Roles, the others Entitlements (with their `type`). Each resource carries both
 * URNs, Okta Identity Governance's and the IETF draft's (draft-ietf-scim-roles-entitlements), and
 * /Schemas describes both. Pure: the catalogue comes from the mapping in force, no platform call.
 */

export const OKTA_ROLE_SCHEMA = "urn:okta:scim:schemas:core:1.0:Role";
export const OKTA_ENTITLEMENT_SCHEMA = "urn:okta:scim:schemas:core:1.0:Entitlement";
export const IETF_ROLE_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Role";
export const IETF_ENTITLEMENT_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Entitlement";

export type CatalogueKind = "Role" | "Entitlement";

const ENDPOINT: Record<CatalogueKind, string> = { Role: "Roles", Entitlement: "Entitlements" };
const SCHEMAS: Record<CatalogueKind, string[]> = {
  Role: [OKTA_ROLE_SCHEMA, IETF_ROLE_SCHEMA],
  Entitlement: [OKTA_ENTITLEMENT_SCHEMA, IETF_ENTITLEMENT_SCHEMA],
};

const kindOf = (e: CatalogueEntry): CatalogueKind => (e.type === "role" ? "Role" : "Entitlement");

/** One entry as its resource. `value` repeats the id: what the IdP puts in a user's roles[] or entitlements[]. */
function catalogueResource(e: CatalogueEntry, baseUrl: string): Record<string, unknown> {
  const kind = kindOf(e);
  return {
    schemas: SCHEMAS[kind],
    id: e.id,
    value: e.id,
    displayName: e.displayName,
    ...(kind === "Entitlement" ? { type: e.type } : {}),
    ...(e.description ? { description: e.description } : {}),
    meta: { resourceType: kind, location: `${baseUrl}/${ENDPOINT[kind]}/${encodeURIComponent(e.id)}` },
  };
}

/** The attributes a filter may name (RFC 7644 3.4.2.2 lets a server refuse the others with invalidFilter). */
const FILTERABLE = new Set(["id", "value", "displayname", "type"]);

function checkFilterable(filter: Filter): void {
  switch (filter.kind) {
    case "and":
    case "or":
      checkFilterable(filter.left);
      checkFilterable(filter.right);
      return;
    case "not":
    case "valuePath":
      throw new BadRequestError("Filters here compare id, value, displayName or type (with and/or)", "invalidFilter");
    default:
      if (!FILTERABLE.has(filter.path.toLowerCase()))
        throw new BadRequestError(
          `Filter attribute '${filter.path.slice(0, 64)}' is not filterable here: use id, value, displayName or type`,
          "invalidFilter",
        );
  }
}

/** The entries of one kind that pass `filter`, in file order, with the total before paging. */
export function listCatalogue(
  catalogue: Catalogue,
  kind: CatalogueKind,
  query: { filter?: string; startIndex: number; count: number },
  baseUrl: string,
): { total: number; resources: Record<string, unknown>[] } {
  const filter = query.filter === undefined ? undefined : parseFilter(query.filter);
  if (filter) checkFilterable(filter);
  const all = catalogue.entries
    .filter((e) => kindOf(e) === kind)
    .map((e) => catalogueResource(e, baseUrl))
    .filter((r) => filter === undefined || matchesFilter(r, filter));
  return { total: all.length, resources: all.slice(query.startIndex - 1, query.startIndex - 1 + query.count) };
}

/** One entry of a kind by id (ids compare without case, as assignments do), or undefined. */
export function findCatalogueResource(
  catalogue: Catalogue,
  kind: CatalogueKind,
  id: string,
  baseUrl: string,
): Record<string, unknown> | undefined {
  const entry = catalogue.entries.find((e) => kindOf(e) === kind && e.id.toLowerCase() === id.toLowerCase());
  return entry && catalogueResource(entry, baseUrl);
}

const attribute = (name: string, description: string, extra: Record<string, unknown> = {}) => ({
  name,
  type: "string",
  multiValued: false,
  description,
  required: false,
  caseExact: false,
  mutability: "readOnly",
  returned: "default",
  uniqueness: "none",
  ...extra,
});

/** /Schemas entries for the four URNs: what the resources above carry, read-only. */
export function describeCatalogueSchemas(baseUrl: string): Record<string, unknown>[] {
  const common = [
    attribute("value", "The value an IdP assigns in a user's roles or entitlements (the catalogue id)", {
      required: true,
      caseExact: true,
      uniqueness: "server",
    }),
    attribute("displayName", "The name shown to the IdP's admins and reviewers", { required: true }),
    attribute("description", "What the entry grants on the platform, in the mapping's words"),
  ];
  const typeAttribute = attribute("type", "What the entitlement grants on the platform", {
    canonicalValues: ["permissionSet", "team", "workspacePermissions"],
  });
  const describe = (id: string, name: string, attributes: unknown[]) => ({
    schemas: ["urn:ietf:params:scim:schemas:core:2.0:Schema"],
    id,
    name,
    description: `${name}: platform access an IdP may assign (the mapping file's catalogue)`,
    attributes,
    meta: { resourceType: "Schema", location: `${baseUrl}/Schemas/${id}` },
  });
  return [
    describe(OKTA_ROLE_SCHEMA, "Role", common),
    describe(OKTA_ENTITLEMENT_SCHEMA, "Entitlement", [...common, typeAttribute]),
    describe(IETF_ROLE_SCHEMA, "Role", common),
    describe(IETF_ENTITLEMENT_SCHEMA, "Entitlement", [...common, typeAttribute]),
  ];
}
