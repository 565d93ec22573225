import { Router, type Request, type Response } from "express";
import {
  createGroup,
  deleteGroup,
  getGroup,
  listGroups,
  patchGroup,
  replaceGroup,
  type GroupWithMembers,
} from "../../scim/groupCommands.js";
import { parseProjection, project, projects, type Projection } from "../../scim/projection.js";
import { etagOf, presentGroup } from "../../scim/resources.js";
import { parseListParams, parseProjectionParams, parseSearchRequest, type ListParams } from "./params.js";
import { listResponse, sendScim } from "./respond.js";
import { writeContext, type ScimRouteDeps } from "./users.js";

/** /Groups: parse, call the group command, present. Members are loaded only when they will be returned. */
export function groupsRouter({ db, baseUrl, maxPageSize }: ScimRouteDeps): Router {
  const router = Router();

  const projectionOf = (req: Request): Projection => {
    const { attributes, excludedAttributes } = parseProjectionParams(req.query);
    return parseProjection("Group", attributes, excludedAttributes);
  };

  const sendGroup = (req: Request, res: Response, status: number, { group, members }: GroupWithMembers) => {
    res.setHeader("ETag", etagOf(group.version));
    if (status === 201) res.setHeader("Location", `${baseUrl}/Groups/${group.id}`);
    sendScim(res, status, project(presentGroup(group, baseUrl, members), projectionOf(req)));
  };

  const sendList = async (res: Response, params: ListParams) => {
    const projection = parseProjection("Group", params.attributes, params.excludedAttributes);
    const page = await listGroups(db, params, projects(projection, "members"));
    const resources = page.items.map(({ group, members }) =>
      project(presentGroup(group, baseUrl, members), projection),
    );
    sendScim(res, 200, listResponse(params, page.total, resources));
  };

  router.get("/", async (req, res) => sendList(res, parseListParams(req.query, maxPageSize)));
  router.post("/.search", async (req, res) => sendList(res, parseSearchRequest(req.body, maxPageSize)));

  router.post("/", async (req, res) =>
    sendGroup(req, res, 201, await createGroup(db, req.body, writeContext(req, res))),
  );
  router.get("/:id", async (req, res) =>
    sendGroup(req, res, 200, await getGroup(db, req.params.id, projects(projectionOf(req), "members"))),
  );
  router.put("/:id", async (req, res) =>
    sendGroup(req, res, 200, await replaceGroup(db, req.params.id, req.body, writeContext(req, res))),
  );

  router.patch("/:id", async (req, res) => {
    const group = await patchGroup(db, req.params.id, req.body, writeContext(req, res));
    const { attributes, excludedAttributes } = parseProjectionParams(req.query);
    if (attributes || excludedAttributes) {
      return sendGroup(req, res, 200, await getGroup(db, group.id, projects(projectionOf(req), "members")));
    }
    res.setHeader("ETag", etagOf(group.version));
    res.status(204).end();
  });

  router.delete("/:id", async (req, res) => {
    await deleteGroup(db, req.params.id, writeContext(req, res));
    res.status(204).end();
  });
  return router;
}
