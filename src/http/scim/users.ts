import { Router, type Request, type Response } from "express";
import type { Database } from "../../db/database.js";
import { parseProjection, project } from "../../scim/projection.js";
import { etagOf, presentUser, type StoredRecord } from "../../scim/resources.js";
import { createUser, deleteUser, getUser, listUsers, patchUser, replaceUser } from "../../scim/userCommands.js";
import type { WriteContext } from "../../scim/writeContext.js";
import { parseListParams, parseProjectionParams, parseSearchRequest, type ListParams } from "./params.js";
import { listResponse, sendScim } from "./respond.js";

export type ScimRouteDeps = { db: Database; baseUrl: string; maxPageSize: number };

export function writeContext(req: Request, res: Response): WriteContext {
  return { requestId: res.locals.requestId as string | undefined, method: req.method, ifMatch: req.get("if-match") };
}

/** /Users: parse, call the user command, present. */
export function usersRouter({ db, baseUrl, maxPageSize }: ScimRouteDeps): Router {
  const router = Router();

  const sendUser = (req: Request, res: Response, status: number, user: StoredRecord) => {
    const { attributes, excludedAttributes } = parseProjectionParams(req.query);
    const body = project(presentUser(user, baseUrl), parseProjection("User", attributes, excludedAttributes));
    res.setHeader("ETag", etagOf(user.version));
    if (status === 201) res.setHeader("Location", `${baseUrl}/Users/${user.id}`);
    sendScim(res, status, body);
  };

  const sendList = async (res: Response, params: ListParams) => {
    const projection = parseProjection("User", params.attributes, params.excludedAttributes);
    const page = await listUsers(db, params);
    sendScim(
      res,
      200,
      listResponse(
        params,
        page.total,
        page.items.map((u) => project(presentUser(u, baseUrl), projection)),
      ),
    );
  };

  router.get("/", async (req, res) => sendList(res, parseListParams(req.query, maxPageSize)));
  router.post("/.search", async (req, res) => sendList(res, parseSearchRequest(req.body, maxPageSize)));

  router.post("/", async (req, res) => sendUser(req, res, 201, await createUser(db, req.body, writeContext(req, res))));
  router.get("/:id", async (req, res) => sendUser(req, res, 200, await getUser(db, req.params.id)));
  router.put("/:id", async (req, res) =>
    sendUser(req, res, 200, await replaceUser(db, req.params.id, req.body, writeContext(req, res))),
  );

  router.patch("/:id", async (req, res) => {
    const user = await patchUser(db, req.params.id, req.body, writeContext(req, res));
    // RFC 7644 3.5.2: 204 is allowed, but a request naming attributes must get the resource back.
    const { attributes, excludedAttributes } = parseProjectionParams(req.query);
    if (attributes || excludedAttributes) return sendUser(req, res, 200, user);
    res.setHeader("ETag", etagOf(user.version));
    res.status(204).end();
  });

  router.delete("/:id", async (req, res) => {
    await deleteUser(db, req.params.id, writeContext(req, res));
    res.status(204).end();
  });
  return router;
}
