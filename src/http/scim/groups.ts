import type { GroupWithMembers } from "../../scim/groupCommands.js";
import { parseProjection, project, projects, type Projection } from "../../scim/projection.js";
import { etagOf, presentGroup } from "../../scim/resources.js";
import { parseListParams, parseProjectionParams, parseSearchRequest, type ListParams } from "./params.js";
import { listResponse, type ScimReply } from "./respond.js";
import type { ResourceHandlers, ScimRequest } from "./routes.js";
import type { ScimRouteDeps } from "./users.js";

/** /Groups: parse, call the group command, present. Members are loaded only when they will be returned. */
export function groupHandlers({ scimDirectory, baseUrl, maxPageSize }: ScimRouteDeps): ResourceHandlers {
  const groups = scimDirectory.groups;
  const projectionOf = (request: ScimRequest): Projection => {
    const { attributes, excludedAttributes } = parseProjectionParams(request.query);
    return parseProjection("Group", attributes, excludedAttributes);
  };

  const reply = (request: ScimRequest, status: number, { group, members }: GroupWithMembers): ScimReply => ({
    status,
    etag: etagOf(group.version),
    location: status === 201 ? `${baseUrl}/Groups/${group.id}` : undefined,
    body: project(presentGroup(group, baseUrl, members), projectionOf(request)),
  });

  const list = async (params: ListParams): Promise<ScimReply> => {
    const projection = parseProjection("Group", params.attributes, params.excludedAttributes);
    const page = await groups.list(params, projects(projection, "members"));
    const resources = page.items.map(({ group, members }) =>
      project(presentGroup(group, baseUrl, members), projection),
    );
    return { status: 200, body: listResponse(params, page.total, resources) };
  };

  return {
    list: (request) => list(parseListParams(request.query, maxPageSize)),
    search: (request) => list(parseSearchRequest(request.body, maxPageSize)),
    create: async (request) => reply(request, 201, await groups.create(request.body, request.context)),
    read: async (request, id) => reply(request, 200, await groups.get(id, projects(projectionOf(request), "members"))),
    replace: async (request, id) => reply(request, 200, await groups.replace(id, request.body, request.context)),
    patch: async (request, id) => {
      const group = await groups.patch(id, request.body, request.context);
      const { attributes, excludedAttributes } = parseProjectionParams(request.query);
      if (attributes || excludedAttributes)
        return reply(request, 200, await groups.get(group.id, projects(projectionOf(request), "members")));
      return { status: 204, etag: etagOf(group.version) };
    },
    remove: async (request, id) => {
      await groups.remove(id, request.context);
      return { status: 204 };
    },
  };
}
