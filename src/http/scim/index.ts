import type { IncomingMessage, ServerResponse } from "node:http";
import { parse as parseQuery } from "node:querystring";
import type { Env } from "../../config/env.js";
import type { ScimDirectory } from "../../scim/frontDoor.js";
import type { ScimTokenVerifier } from "../../auth/scimTokens.js";
import { NotFoundError } from "../../errors.js";
import { scimRouteTemplate } from "../../metrics/scimRoutes.js";
import type { FailedAuthThrottle } from "../../auth/authThrottle.js";
import { localsOf } from "../requestContext.js";
import { scimAuthenticator } from "./auth.js";
import { scimBodyReader } from "./body.js";
import { discoveryHandlers } from "./discovery.js";
import { catalogueHandlers } from "./catalogue.js";
import { EMPTY_CATALOGUE } from "../../mapping/catalogue.js";
import type { Catalogue } from "../../mapping/compiled.js";
import { answerScimError } from "./errors.js";
import { groupHandlers } from "./groups.js";
import { sendReply } from "./respond.js";
import { ScimRoutes, type ScimRequest } from "./routes.js";
import { rootSearch } from "./search.js";
import { userHandlers } from "./users.js";

/** What the SCIM server needs from the process (a part of the app's `AppDeps`). */
export type ScimServerDeps = {
  env: Env;
  /** The user, group and search commands (src/scim/frontDoor.ts), built once by src/service/http.ts. */
  scimDirectory: ScimDirectory;
  /** The IdP bearer tokens (SCIM_TOKEN and the stored ones), built by src/service/http.ts. */
  scimTokens: ScimTokenVerifier;
  publicUrl: string;
  /** The failed-auth throttle of the SCIM surface (built once by src/service/http.ts). */
  throttle: FailedAuthThrottle;
  /** Records that the IdP spoke (idp.silent, src/notify/conditions.ts), at most once a minute. */
  noteIdpActivity: () => void;
  /** The client's address as TRUST_PROXY has it (for the failed-auth throttle). */
  clientAddress: (req: IncomingMessage) => string | undefined;
  /** The mapping's catalogue in force (roles and entitlements the IdP may assign); none when absent. */
  catalogue?: () => Promise<Catalogue>;
};

/** A request for the SCIM server: its path under /scim/v2 ("/" at the root) and its raw query string. */
export type ScimTarget = { path: string; query: string };

const MOUNT = /^\/scim\/v2(?=[/?]|$)/i;
/** The scheme and host of an absolute-form request target (RFC 9112 3.2.2), which Express also routed by its path. */
const ABSOLUTE_FORM = /^https?:\/\/[^/?#]*/i;

/** Where a request URL points under /scim/v2 (matched case-insensitively, as Express did), or undefined. */
export function scimTarget(target: string): ScimTarget | undefined {
  const url = target.startsWith("/") ? target : target.replace(ABSOLUTE_FORM, "");
  const match = MOUNT.exec(url);
  if (match === null) return undefined;
  const queryAt = url.indexOf("?");
  const path = url.slice(match[0].length, queryAt === -1 ? undefined : queryAt);
  return { path: path || "/", query: queryAt === -1 ? "" : url.slice(queryAt + 1) };
}

const WITH_BODY = new Set(["POST", "PUT", "PATCH"]);
const noEndpoint = (method: string, path: string) =>
  new NotFoundError(`No SCIM endpoint ${method} ${path.slice(0, 200)}`);
const NO_QUERY: Record<string, unknown> = Object.freeze(Object.create(null) as Record<string, unknown>);

/**
 * The IdP-facing SCIM 2.0 server (RFC 7643/7644) at /scim/v2, on node:http without Express: the
 * IdPs' requests are nearly all of the traffic, and Express's routing cost more CPU per request
 * than the SCIM work itself (docs/performance.md). In order: bearer auth (so an unauthenticated
 * client cannot make the server parse a body), the IdP-activity note, the body, the route, the
 * handler, and one RFC 7644 error translator for whatever fails on the way.
 */
export function scimServer(deps: ScimServerDeps): {
  serve(req: IncomingMessage, res: ServerResponse, at: ScimTarget): void;
  routes: ScimRoutes;
} {
  const baseUrl = `${deps.publicUrl}/scim/v2`;
  const maxPageSize = deps.env.SCIM_MAX_PAGE_SIZE;
  const catalogue = deps.catalogue ?? (() => Promise.resolve(EMPTY_CATALOGUE));
  const routeDeps = { scimDirectory: deps.scimDirectory, baseUrl, maxPageSize, catalogue };
  const routes = new ScimRoutes({
    users: userHandlers(routeDeps),
    groups: groupHandlers(routeDeps),
    discovery: discoveryHandlers(baseUrl, maxPageSize),
    catalogue: catalogueHandlers(routeDeps),
    search: rootSearch(routeDeps),
  });
  const authenticate = scimAuthenticator(deps.scimTokens, deps.throttle, deps.clientAddress);
  const { noteIdpActivity } = deps;
  const readBody = scimBodyReader(deps.env.SCIM_MAX_BODY_BYTES);

  async function serve(req: IncomingMessage, res: ServerResponse, { path, query }: ScimTarget): Promise<void> {
    const authenticated = authenticate(req, res);
    if (authenticated !== true && !(await authenticated)) return;
    noteIdpActivity();
    const method = req.method ?? "";
    const body = WITH_BODY.has(method) ? await readBody(req, res) : undefined;
    if (method === "OPTIONS") {
      const allowed = routes.allowed(path);
      if (allowed.length === 0) throw noEndpoint(method, path);
      res.setHeader("Allow", allowed.join(", "));
      return sendReply(res, { status: 204 });
    }
    const route = routes.match(method, path);
    if (route === undefined) throw noEndpoint(method, path);
    const request: ScimRequest = {
      query: query === "" ? NO_QUERY : parseQuery(query),
      body,
      context: { requestId: localsOf(res).requestId, method, ifMatch: req.headers["if-match"] },
    };
    sendReply(res, await route.handler(request, route.id));
  }

  return {
    serve(req, res, at) {
      localsOf(res).scimRoute = scimRouteTemplate(at.path); // the latency histogram's label, 401s included
      serve(req, res, at).catch((error: unknown) => answerScimError(error, req, res, at.path));
    },
    routes,
  };
}
