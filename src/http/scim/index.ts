import { Router } from "express";
import type { Clock } from "../../clock.js";
import type { Env } from "../../config/env.js";
import type { Database } from "../../db/database.js";
import type { ServiceMetrics } from "../../metrics/index.js";
import { ScimTokenVerifier } from "../../auth/scimTokens.js";
import { TokenRepository } from "../../db/tokenRepository.js";
import { NotFoundError } from "../../errors.js";
import { noteIdpRequests } from "../../notify/conditions.js";
import { failedAuthThrottle } from "../authThrottle.js";
import { requireScimToken } from "./auth.js";
import { scimBody } from "./body.js";
import { discoveryRouter } from "./discovery.js";
import { scimErrorHandler } from "./errors.js";
import { groupsRouter } from "./groups.js";
import { rootSearchRouter } from "./search.js";
import { usersRouter } from "./users.js";

/** What the SCIM server needs from the process (a part of the app's `AppDeps`). */
export type ScimRouterDeps = { env: Env; db: Database; clock: Clock; publicUrl: string; metrics?: ServiceMetrics };

/**
 * The IdP-facing SCIM 2.0 server (RFC 7643/7644) mounted at /scim/v2: bearer auth first (so an
 * unauthenticated client cannot make the server parse a body), then the body limits, then the
 * resource routers, then one RFC 7644 error translator.
 */
export function scimRouter(deps: ScimRouterDeps): Router {
  const baseUrl = `${deps.publicUrl}/scim/v2`;
  const routeDeps = { db: deps.db, baseUrl, maxPageSize: deps.env.SCIM_MAX_PAGE_SIZE };
  const router = Router();
  const throttle = failedAuthThrottle(deps.db, deps.env, "scim", deps.metrics);
  router.use(requireScimToken(new ScimTokenVerifier(new TokenRepository(deps.db), deps.env.SCIM_TOKEN), throttle));
  router.use(noteIdpRequests(deps.db, deps.clock)); // idp.silent (src/notify/conditions.ts)
  router.use(scimBody(deps.env.SCIM_MAX_BODY_BYTES));
  // Resources before discovery: their paths never overlap, and nearly every request is for a resource.
  router.use("/Users", usersRouter(routeDeps));
  router.use("/Groups", groupsRouter(routeDeps));
  router.use(discoveryRouter(baseUrl, deps.env.SCIM_MAX_PAGE_SIZE));
  router.use(rootSearchRouter(routeDeps));
  router.use((req, _res, next) => next(new NotFoundError(`No SCIM endpoint ${req.method} ${req.path.slice(0, 200)}`)));
  router.use(scimErrorHandler);
  return router;
}
