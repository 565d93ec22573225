import { parseProjection, project, projects } from "../../scim/projection.js";
import { presentGroup, presentUser } from "../../scim/resources.js";
import { parseSearchRequest } from "./params.js";
import { listResponse, type ScimReply } from "./respond.js";
import type { ScimRequest } from "./routes.js";
import type { ScimRouteDeps } from "./users.js";

/** POST /.search at the service root (RFC 7644 3.4.3): Users and Groups in one ListResponse. */
export function rootSearch({ scimDirectory, baseUrl, maxPageSize }: ScimRouteDeps) {
  return async (request: ScimRequest): Promise<ScimReply> => {
    const params = parseSearchRequest(request.body, maxPageSize);
    // Attribute names resolve per resource type: `members` selects nothing on a User.
    const userProjection = parseProjection("User", params.attributes, params.excludedAttributes);
    const groupProjection = parseProjection("Group", params.attributes, params.excludedAttributes);
    const page = await scimDirectory.search(params, projects(groupProjection, "members"));
    const resources = page.items.map((hit) =>
      hit.kind === "User"
        ? project(presentUser(hit.record, baseUrl), userProjection)
        : project(presentGroup(hit.record, baseUrl, hit.members), groupProjection),
    );
    return { status: 200, body: listResponse(params, page.total, resources) };
  };
}
