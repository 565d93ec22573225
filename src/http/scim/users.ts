import { parseProjection, project } from "../../scim/projection.js";
import { etagOf, presentUser, type StoredRecord } from "../../scim/resources.js";
import type { ScimDirectory } from "../../scim/frontDoor.js";
import { parseListParams, parseProjectionParams, parseSearchRequest, type ListParams } from "./params.js";
import { listResponse, type ScimReply } from "./respond.js";
import type { ResourceHandlers, ScimRequest } from "./routes.js";
import type { Catalogue } from "../../mapping/compiled.js";

export type ScimRouteDeps = {
  /** The user, group and search commands (src/scim/frontDoor.ts), built once. */
  scimDirectory: ScimDirectory;
  baseUrl: string;
  maxPageSize: number;
  /** The catalogue a user's roles[] and entitlements[] must come from. */
  catalogue?: () => Promise<Catalogue>;
};

/** /Users: parse, call the user command, present. */
export function userHandlers({ scimDirectory, baseUrl, maxPageSize, catalogue }: ScimRouteDeps): ResourceHandlers {
  const users = scimDirectory.users;
  const reply = (request: ScimRequest, status: number, user: StoredRecord): ScimReply => {
    const { attributes, excludedAttributes } = parseProjectionParams(request.query);
    return {
      status,
      etag: etagOf(user.version),
      location: status === 201 ? `${baseUrl}/Users/${user.id}` : undefined,
      body: project(presentUser(user, baseUrl), parseProjection("User", attributes, excludedAttributes)),
    };
  };

  const list = async (params: ListParams): Promise<ScimReply> => {
    const projection = parseProjection("User", params.attributes, params.excludedAttributes);
    const page = await users.list(params);
    const resources = page.items.map((u) => project(presentUser(u, baseUrl), projection));
    return { status: 200, body: listResponse(params, page.total, resources) };
  };

  return {
    list: (request) => list(parseListParams(request.query, maxPageSize)),
    search: (request) => list(parseSearchRequest(request.body, maxPageSize)),
    create: async (request) => reply(request, 201, await users.create(request.body, request.context, catalogue)),
    read: async (request, id) => reply(request, 200, await users.get(id)),
    replace: async (request, id) =>
      reply(request, 200, await users.replace(id, request.body, request.context, catalogue)),
    patch: async (request, id) => {
      const user = await users.patch(id, request.body, request.context, catalogue);
      // RFC 7644 3.5.2: 204 is allowed, but a request naming attributes must get the resource back.
      const { attributes, excludedAttributes } = parseProjectionParams(request.query);
      if (attributes || excludedAttributes) return reply(request, 200, user);
      return { status: 204, etag: etagOf(user.version) };
    },
    remove: async (request, id) => {
      await users.remove(id, request.context);
      return { status: 204 };
    },
  };
}
