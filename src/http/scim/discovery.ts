import { NotFoundError } from "../../errors.js";
import {
  describeSchemas,
  ENTERPRISE_SCHEMA,
  GROUP_SCHEMA,
  LIST_RESPONSE_SCHEMA,
  USER_SCHEMA,
} from "../../scim/schemas.js";
import type { ScimReply } from "./respond.js";
import {
  describeCatalogueSchemas,
  IETF_ENTITLEMENT_SCHEMA,
  IETF_ROLE_SCHEMA,
  OKTA_ENTITLEMENT_SCHEMA,
  OKTA_ROLE_SCHEMA,
} from "../../scim/catalogueResources.js";

type Lookup = (request: unknown, id: string) => ScimReply;

/**
 * /ServiceProviderConfig, /ResourceTypes and /Schemas (RFC 7644 section 4), saying only what is
 * supported; /ResourceTypes also names the catalogue's Role and Entitlement (./catalogue.ts).
 */
export function discoveryHandlers(
  baseUrl: string,
  maxPageSize: number,
): { serviceProviderConfig: Lookup; resourceTypes: Lookup; resourceType: Lookup; schemas: Lookup; schema: Lookup } {
  const listOf = (resources: unknown[]) => ({
    schemas: [LIST_RESPONSE_SCHEMA],
    totalResults: resources.length,
    startIndex: 1,
    itemsPerPage: resources.length,
    Resources: resources,
  });

  const serviceProviderConfig = {
    schemas: ["urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"],
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: maxPageSize },
    changePassword: { supported: false },
    // Sorting (sortBy/sortOrder, on GET and POST .search) on userName, displayName, externalId, meta.created, meta.lastModified.
    sort: { supported: true },
    etag: { supported: true },
    authenticationSchemes: [
      {
        type: "oauthbearertoken",
        name: "OAuth Bearer Token",
        description:
          "A bearer token in the Authorization header: SCIM_TOKEN, or one made with `scim-connector token create`",
        specUri: "https://www.rfc-editor.org/rfc/rfc6750",
        primary: true,
      },
    ],
    meta: { resourceType: "ServiceProviderConfig", location: `${baseUrl}/ServiceProviderConfig` },
  };

  const resourceTypes = [
    {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:ResourceType"],
      id: "User",
      name: "User",
      endpoint: "/Users",
      description: "User Account",
      schema: USER_SCHEMA,
      schemaExtensions: [{ schema: ENTERPRISE_SCHEMA, required: false }],
      meta: { resourceType: "ResourceType", location: `${baseUrl}/ResourceTypes/User` },
    },
    {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:ResourceType"],
      id: "Group",
      name: "Group",
      endpoint: "/Groups",
      description: "Group",
      schema: GROUP_SCHEMA,
      meta: { resourceType: "ResourceType", location: `${baseUrl}/ResourceTypes/Group` },
    },
    // The mapping's catalogue (src/mapping/catalogue.ts). Okta Identity Governance reads the Okta URN
    // here; the IETF draft's URN is each resource's second schema, described at /Schemas.
    {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:ResourceType"],
      id: "Role",
      name: "Role",
      endpoint: "/Roles",
      description: "Platform access an IdP may assign as a role (read-only; also " + IETF_ROLE_SCHEMA + ")",
      schema: OKTA_ROLE_SCHEMA,
      meta: { resourceType: "ResourceType", location: `${baseUrl}/ResourceTypes/Role` },
    },
    {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:ResourceType"],
      id: "Entitlement",
      name: "Entitlement",
      endpoint: "/Entitlements",
      description:
        "Platform access an IdP may assign as an entitlement (read-only; also " + IETF_ENTITLEMENT_SCHEMA + ")",
      schema: OKTA_ENTITLEMENT_SCHEMA,
      meta: { resourceType: "ResourceType", location: `${baseUrl}/ResourceTypes/Entitlement` },
    },
  ];
  const schemas = [...describeSchemas(baseUrl), ...describeCatalogueSchemas(baseUrl)];

  return {
    serviceProviderConfig: () => ({ status: 200, body: serviceProviderConfig }),
    resourceTypes: () => ({ status: 200, body: listOf(resourceTypes) }),
    resourceType: (_request, id) => {
      const found = resourceTypes.find((t) => t.id.toLowerCase() === id.toLowerCase());
      if (!found) throw new NotFoundError(`Resource type ${id.slice(0, 64)} not found`);
      return { status: 200, body: found };
    },
    schemas: () => ({ status: 200, body: listOf(schemas) }),
    schema: (_request, id) => {
      const found = schemas.find((s) => String(s.id).toLowerCase() === id.toLowerCase());
      if (!found) throw new NotFoundError(`Schema ${id.slice(0, 200)} not found`);
      return { status: 200, body: found };
    },
  };
}
