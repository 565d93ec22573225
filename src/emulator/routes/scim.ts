import type { Request, RequestHandler } from "express";
import { rateLimit, requireScimToken } from "../pipeline/auth.js";
import { parseDashboardUser, samePermissions, SCIM_LIST_SCHEMA, type DashboardUserInput } from "../dashboard/users.js";
import { scimError, sendJson } from "../http.js";
import type { PermissionModel } from "../dashboard/permissionModel.js";
import { ipOf, SCIM_API_ACTOR } from "../security/events.js";
import type { ScimJournalEntry } from "../state.js";
import type { RouteContext } from "./context.js";

/**
 * The SCIM family: POST, GET by id, GET by `userName eq` filter, PUT, DELETE. Every
 * authenticated request counts against the 5,000-per-UTC-day budget, whatever its answer.
 * Each write that succeeds is a security event, by the emulator's API actor.
 */

/** The document gives this content type for the DELETE 204 and for the 404 body. */
const SCIM_HTML_CONTENT_TYPE = "text/html; charset=UTF-8";

const notFound = () => scimError(404, "User not found", SCIM_HTML_CONTENT_TYPE);

/** Pure: the email of `userName eq "<email>"`, also when still URL-encoded; undefined otherwise. */
export function parseUserNameFilter(raw: string): string | undefined {
  let text = raw;
  if (/%[0-9A-Fa-f]{2}/.test(text)) {
    try {
      text = decodeURIComponent(text.replace(/\+/g, " "));
    } catch {
      return undefined;
    }
  }
  const match = /^\s*userName\s+eq\s+"((?:[^"\\]|\\.)*)"\s*$/i.exec(text);
  return match ? match[1]!.replace(/\\(.)/g, "$1") : undefined;
}

function parseBody(req: Request, model: PermissionModel): DashboardUserInput {
  const parsed = parseDashboardUser(req.body, model.model);
  if (!parsed.ok) throw scimError(400, parsed.detail, undefined, "invalidValue");
  return parsed.value;
}

export function scimRoutes({ state, auth, route }: RouteContext): void {
  const users = state.dashboardUsers;
  const journal: RequestHandler = (req, res, next) => {
    if (state.scimJournal) {
      const entry: ScimJournalEntry = { at: state.nowMs(), method: req.method, userName: subjectOf(req) };
      state.scimJournal.push(entry);
      // When the answer has left: its status and what the platform then holds for the userName.
      res.once("close", () => {
        entry.status = res.statusCode;
        const held = entry.userName === null ? undefined : users.findByUserName(entry.userName);
        entry.permissionsAfter = held ? held.permissions : null;
      });
    }
    next();
  };
  const subjectOf = (req: Request): string | null => {
    if (req.params.id !== undefined) return users.get(String(req.params.id))?.userName ?? null;
    if (req.method === "POST") {
      const body = req.body as { userName?: unknown } | undefined;
      return typeof body?.userName === "string" ? body.userName : null;
    }
    return typeof req.query.filter === "string" ? (parseUserNameFilter(req.query.filter) ?? null) : null;
  };
  const guard = [requireScimToken(auth), journal, rateLimit(state, state.scimDaily, { scim: true })];
  const recordWrite = (req: Request, event: string, account: string) =>
    state.recordSecurityEvent({
      actor: SCIM_API_ACTOR,
      event,
      account,
      ip: ipOf(req.socket.remoteAddress),
      details: null,
    });

  route("post", "/scim/v2/Users", "/scim/v2/Users", ...guard, (req, res) => {
    const created = users.create(parseBody(req, users.model), state.clock.now());
    if (!created) throw scimError(409, "User already exists in the database.");
    recordWrite(req, "Added Account", created.userName);
    sendJson(res, 201, created);
  });

  route("get", "/scim/v2/Users", "/scim/v2/Users", ...guard, (req, res) => {
    const filter = req.query.filter;
    if (typeof filter !== "string")
      throw scimError(400, 'A filter of the form userName eq "<email>" is required', undefined, "invalidFilter");
    const userName = parseUserNameFilter(filter);
    if (userName === undefined)
      throw scimError(400, 'Only the filter userName eq "<email>" is supported', undefined, "invalidFilter");
    const found = users.findByUserName(userName);
    sendJson(res, 200, { schemas: [SCIM_LIST_SCHEMA], totalResults: found ? 1 : 0, Resources: found ? [found] : [] });
  });

  route("get", "/scim/v2/Users/:id", "/scim/v2/Users/{id}", ...guard, (req, res) => {
    const user = users.get(String(req.params.id));
    if (!user) throw notFound();
    sendJson(res, 200, user);
  });

  route("put", "/scim/v2/Users/:id", "/scim/v2/Users/{id}", ...guard, (req, res) => {
    const existing = users.get(String(req.params.id));
    if (!existing) throw notFound();
    const input = parseBody(req, users.model);
    if (input.userName.toLowerCase() !== existing.userName.toLowerCase()) {
      throw scimError(400, "userName cannot be changed", undefined, "mutability");
    }
    const replaced = users.replace(existing, input);
    const changed = !samePermissions(existing.permissions, replaced.permissions);
    recordWrite(req, changed ? "Updated Account Permission" : "Developer Updated", replaced.userName);
    sendJson(res, 200, replaced);
  });

  route("delete", "/scim/v2/Users/:id", "/scim/v2/Users/{id}", ...guard, (req, res) => {
    const existing = users.get(String(req.params.id));
    if (!existing || !users.delete(existing.id)) throw notFound();
    recordWrite(req, "Removed Account", existing.userName);
    // res.end, not res.send: Express strips Content-Type from a 204, and the document gives one.
    res.status(204).setHeader("Content-Type", SCIM_HTML_CONTENT_TYPE);
    res.end();
  });
}
