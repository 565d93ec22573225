import { NotFoundError } from "../../errors.js";
import type { Catalogue } from "../../mapping/compiled.js";
import { findCatalogueResource, listCatalogue, type CatalogueKind } from "../../scim/catalogueResources.js";
import { parseListParams } from "./params.js";
import { listResponse, type ScimReply } from "./respond.js";
import type { Handler } from "./routes.js";

/**
 * /Roles and /Entitlements (read-only): the mapping's catalogue as Okta Identity Governance and the
 * IETF draft read it, with `filter`, `startIndex`/`count` and GET by id. They read the mapping in
 * force only: no platform call, no write.
 */
export function catalogueHandlers(deps: {
  catalogue: () => Promise<Catalogue>;
  baseUrl: string;
  maxPageSize: number;
}): Record<"roles" | "role" | "entitlements" | "entitlement", Handler> {
  const list =
    (kind: CatalogueKind): Handler =>
    async (request): Promise<ScimReply> => {
      const params = parseListParams(request.query, deps.maxPageSize);
      const { total, resources } = listCatalogue(await deps.catalogue(), kind, params, deps.baseUrl);
      return { status: 200, body: listResponse(params, total, resources) };
    };
  const one =
    (kind: CatalogueKind): Handler =>
    async (_request, id): Promise<ScimReply> => {
      const found = findCatalogueResource(await deps.catalogue(), kind, id, deps.baseUrl);
      if (!found) throw new NotFoundError(`${kind} ${id.slice(0, 128)} not found`);
      return { status: 200, body: found };
    };
  return { roles: list("Role"), role: one("Role"), entitlements: list("Entitlement"), entitlement: one("Entitlement") };
}
