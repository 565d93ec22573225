import { Router } from "express";
import { NotFoundError } from "../../errors.js";
import {
  describeSchemas,
  ENTERPRISE_SCHEMA,
  GROUP_SCHEMA,
  LIST_RESPONSE_SCHEMA,
  USER_SCHEMA,
} from "../../scim/schemas.js";
import { sendScim } from "./respond.js";

/** /ServiceProviderConfig, /ResourceTypes and /Schemas (RFC 7644 section 4), saying only what is supported. */
export function discoveryRouter(baseUrl: string, maxPageSize: number): Router {
  const router = Router();
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
  ];
  const schemas = describeSchemas(baseUrl);

  router.get("/ServiceProviderConfig", (_req, res) => sendScim(res, 200, serviceProviderConfig));
  router.get("/ResourceTypes", (_req, res) => sendScim(res, 200, listOf(resourceTypes)));
  router.get("/ResourceTypes/:id", (req, res) => {
    const found = resourceTypes.find((t) => t.id.toLowerCase() === req.params.id.toLowerCase());
    if (!found) throw new NotFoundError(`Resource type ${req.params.id.slice(0, 64)} not found`);
    sendScim(res, 200, found);
  });
  router.get("/Schemas", (_req, res) => sendScim(res, 200, listOf(schemas)));
  router.get("/Schemas/:id", (req, res) => {
    const found = schemas.find((s) => String(s.id).toLowerCase() === req.params.id.toLowerCase());
    if (!found) throw new NotFoundError(`Schema ${req.params.id.slice(0, 200)} not found`);
    sendScim(res, 200, found);
  });
  return router;
}
