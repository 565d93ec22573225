import { Router } from "express";
import type { Database } from "../../db/database.js";
import { parseProjection, project, projects } from "../../scim/projection.js";
import { presentGroup, presentUser } from "../../scim/resources.js";
import { searchResources } from "../../scim/searchCommands.js";
import { parseSearchRequest } from "./params.js";
import { listResponse, sendScim } from "./respond.js";

/** POST /.search at the service root (RFC 7644 3.4.3): Users and Groups in one ListResponse. */
export function rootSearchRouter({
  db,
  baseUrl,
  maxPageSize,
}: {
  db: Database;
  baseUrl: string;
  maxPageSize: number;
}): Router {
  const router = Router();
  router.post("/.search", async (req, res) => {
    const params = parseSearchRequest(req.body, maxPageSize);
    // Attribute names resolve per resource type: `members` selects nothing on a User.
    const userProjection = parseProjection("User", params.attributes, params.excludedAttributes);
    const groupProjection = parseProjection("Group", params.attributes, params.excludedAttributes);
    const page = await searchResources(db, params, projects(groupProjection, "members"));
    const resources = page.items.map((hit) =>
      hit.kind === "User"
        ? project(presentUser(hit.record, baseUrl), userProjection)
        : project(presentGroup(hit.record, baseUrl, hit.members), groupProjection),
    );
    sendScim(res, 200, listResponse(params, page.total, resources));
  });
  return router;
}
