import { BadRequestError } from "../../errors.js";
import type { WriteContext } from "../../scim/writeContext.js";
import type { ScimReply } from "./respond.js";

/** A SCIM request as the handlers see it, once authenticated and its body read. */
export type ScimRequest = {
  /** The query string, parsed as Express parsed it (node's querystring). */
  query: Record<string, unknown>;
  /** The JSON body of a POST, PUT or PATCH (checked by body.ts); undefined for the other methods. */
  body: unknown;
  context: WriteContext;
};

/** `id` is the decoded `{id}` of a member path (`/Users/{id}`), "" on a collection. */
export type Handler = (request: ScimRequest, id: string) => ScimReply | Promise<ScimReply>;

export type ResourceHandlers = Record<"list" | "search" | "create" | "read" | "replace" | "patch" | "remove", Handler>;

/**
 * One top-level SCIM path: its handlers by method on the collection (`/Users`), on a member
 * (`/Users/{id}`), and for POST `/Users/.search`. HEAD is answered by GET.
 */
type Endpoint = { path: string; collection: Map<string, Handler>; member?: Map<string, Handler>; search?: Handler };

type Match = { handler: Handler; id: string };

const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];

/**
 * The SCIM server's routes (RFC 7644 3.2), matched as Express matched them before this table
 * replaced its routers: path names case-insensitively, one trailing slash allowed, `{id}` decoded
 * (a malformed percent-encoding is a 400 whatever the method). Paths and methods not here are 404.
 */
export class ScimRoutes {
  private readonly endpoints: Map<string, Endpoint>;

  constructor(handlers: {
    users: ResourceHandlers;
    groups: ResourceHandlers;
    discovery: Record<"serviceProviderConfig" | "resourceTypes" | "resourceType" | "schemas" | "schema", Handler>;
    catalogue: Record<"roles" | "role" | "entitlements" | "entitlement", Handler>;
    search: Handler;
  }) {
    const { users, groups, discovery, catalogue, search } = handlers;
    const resource = (path: string, r: ResourceHandlers): Endpoint => ({
      path,
      collection: new Map([
        ["GET", r.list],
        ["POST", r.create],
      ]),
      member: new Map([
        ["GET", r.read],
        ["PUT", r.replace],
        ["PATCH", r.patch],
        ["DELETE", r.remove],
      ]),
      search: r.search,
    });
    const lookup = (path: string, list: Handler, one: Handler): Endpoint => ({
      path,
      collection: new Map([["GET", list]]),
      member: new Map([["GET", one]]),
    });
    const endpoints: Endpoint[] = [
      resource("/Users", users),
      resource("/Groups", groups),
      { path: "/ServiceProviderConfig", collection: new Map([["GET", discovery.serviceProviderConfig]]) },
      lookup("/ResourceTypes", discovery.resourceTypes, discovery.resourceType),
      lookup("/Schemas", discovery.schemas, discovery.schema),
      lookup("/Roles", catalogue.roles, catalogue.role),
      lookup("/Entitlements", catalogue.entitlements, catalogue.entitlement),
      { path: "/.search", collection: new Map([["POST", search]]) },
    ];
    this.endpoints = new Map(endpoints.map((e) => [e.path.slice(1).toLowerCase(), e]));
  }

  /** The handler for `method` on `path` (relative to /scim/v2, without the query), if any. */
  match(method: string, path: string): Match | undefined {
    const parts = path.split("/");
    if (parts.length > 2 && parts[parts.length - 1] === "") parts.pop();
    const name = parts[1];
    const endpoint = name === undefined || parts.length > 3 ? undefined : this.endpoints.get(name.toLowerCase());
    if (endpoint === undefined) return undefined;
    const verb = method === "HEAD" ? "GET" : method;
    if (parts.length === 2) {
      const handler = endpoint.collection.get(verb);
      return handler && { handler, id: "" };
    }
    const segment = parts[2]!;
    if (segment === "" || endpoint.member === undefined) return undefined;
    if (verb === "POST" && endpoint.search && segment.toLowerCase() === ".search")
      return { handler: endpoint.search, id: "" };
    const id = decodeSegment(segment);
    const handler = endpoint.member.get(verb);
    return handler && { handler, id };
  }

  /** Every route as method and path template (`/Users/:id`), relative to /scim/v2; HEAD goes with GET. */
  list(): { method: string; path: string }[] {
    return [...this.endpoints.values()].flatMap(({ path, collection, member, search }) => [
      ...[...collection.keys()].map((method) => ({ method, path })),
      ...(search ? [{ method: "POST", path: `${path}/.search` }] : []),
      ...[...(member?.keys() ?? [])].map((method) => ({ method, path: `${path}/:id` })),
    ]);
  }

  /** The methods `path` answers, for OPTIONS (empty when it is no SCIM endpoint). */
  allowed(path: string): string[] {
    return METHODS.filter((method) => this.match(method, path) !== undefined);
  }
}

function decodeSegment(segment: string): string {
  if (!segment.includes("%")) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new BadRequestError("The request could not be understood", "invalidSyntax");
  }
}
