import { Router, type RequestHandler } from "express";
import { DIRECTORY_KINDS } from "./dashboard/directory.js";
import { loadFixtures, parseFixtures } from "./fixtures.js";
import { parseFaultSpec } from "./pipeline/faults.js";
import { dashboardRoutes } from "./routes/dashboard.js";
import type { SecurityExporter } from "./security/export.js";
import { badRequest, bodyObject, restError, sendJson } from "./http.js";
import { changePermissionModel, parseModelChange } from "./dashboard/migration.js";
import type { EmulatorState } from "./state.js";
import { oneOf, requiredString } from "./validation.js";

/**
 * The control plane under `/_emulator/`: reset, stats, clock, faults, fixtures, the permission
 * model and its migration, renames in the company's directory, a state dump, and the dashboard
 * with its security record (src/emulator/routes/dashboard.ts).
 * It answers loopback callers only, because it can wipe and rewrite everything. A web page in a
 * browser on the same machine is a loopback caller too, so cross-site requests are refused as
 * well: the Host must be a loopback name (DNS rebinding), a browser's Origin must be loopback, and
 * a body must be JSON (a cross-site form or text/plain post cannot send that without a preflight).
 */

export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  return address === "::1" || address.startsWith("127.") || address.startsWith("::ffff:127.");
}

const loopbackOnly: RequestHandler = (req, _res, next) => {
  if (!isLoopback(req.socket.remoteAddress))
    throw restError(403, "The emulator control plane answers loopback callers only");
  next();
};

const LOOPBACK_NAMES = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/** A Host header or Origin host (with an optional port) that names this machine. */
function isLoopbackHostName(host: string | undefined): boolean {
  if (!host) return false;
  return LOOPBACK_NAMES.test(host.replace(/:\d+$/, ""));
}

function isLoopbackOrigin(origin: string): boolean {
  try {
    const url = new URL(origin);
    return (url.protocol === "http:" || url.protocol === "https:") && isLoopbackHostName(url.host);
  } catch {
    return false; // includes "null" (sandboxed frames, file: pages)
  }
}

const sameMachineOnly: RequestHandler = (req, _res, next) => {
  if (!isLoopbackHostName(req.headers.host))
    throw restError(
      403,
      "The emulator control plane answers requests addressed to localhost, 127.0.0.1 or [::1] only (Host)",
    );
  const origin = req.headers.origin;
  if (origin !== undefined && !isLoopbackOrigin(origin))
    throw restError(403, "The emulator control plane refuses cross-site requests (Origin is not this machine)");
  const hasBody = Number(req.headers["content-length"] ?? 0) > 0 || req.headers["transfer-encoding"] !== undefined;
  if (hasBody && !req.is(["application/json", "application/*+json"]))
    throw restError(415, "The emulator control plane takes JSON bodies only (Content-Type: application/json)");
  next();
};

export function controlRouter(state: EmulatorState, exporter?: SecurityExporter): Router {
  const router = Router();
  router.use(loopbackOnly, sameMachineOnly);
  dashboardRoutes(router, state, exporter);

  router.post("/reset", (_req, res) => {
    state.reset();
    sendJson(res, 200, { message: "reset" });
  });

  router.get("/stats", (_req, res) => sendJson(res, 200, state.stats()));

  router.get("/requests", (req, res) => {
    const since = typeof req.query.since === "string" ? Date.parse(req.query.since) : 0;
    if (Number.isNaN(since)) throw badRequest("since must be an ISO date-time");
    const route = typeof req.query.route === "string" ? req.query.route : "";
    sendJson(res, 200, { requests: state.requestsSince(since, route) });
  });

  router.get("/state", (_req, res) => sendJson(res, 200, state.dump()));

  router.get("/clock", (_req, res) => sendJson(res, 200, { now: state.clock.now().toISOString() }));

  router.post("/clock", (req, res) => {
    const { advanceMs } = bodyObject(req);
    if (typeof advanceMs !== "number" || !Number.isFinite(advanceMs) || advanceMs < 0)
      throw badRequest("advanceMs must be a non-negative number");
    state.advanceClock(advanceMs);
    sendJson(res, 200, { now: state.clock.now().toISOString() });
  });

  router.get("/faults", (_req, res) => sendJson(res, 200, { faults: state.faults.list() }));

  router.post("/faults", (req, res) => {
    const fault = state.faults.add(parseFaultSpec(req.body));
    sendJson(res, 201, fault);
  });

  router.delete("/faults", (_req, res) => {
    state.faults.clear();
    sendJson(res, 200, { message: "faults cleared" });
  });

  router.post("/fixtures", (req, res) => {
    loadFixtures(state, parseFixtures(req.body));
    sendJson(res, 200, {
      message: "fixtures loaded",
      integrations: state.integrations.length,
      invalidPhones: state.invalidPhones.size,
      workspaces: state.directory.workspaces.values().length,
      roles: state.directory.roles.values().length,
      permissionSets: state.directory.permissionSets.values().length,
    });
  });

  router.get("/permissions", (_req, res) => sendJson(res, 200, state.dashboardUsers.model));

  router.post("/permissions", (req, res) => {
    const requested = parseModelChange(bodyObject(req));
    sendJson(res, 200, changePermissionModel(state.dashboardUsers, requested));
  });

  router.post("/rename", (req, res) => {
    const body = bodyObject(req);
    const kind = oneOf(body.kind, "kind", DIRECTORY_KINDS);
    const id = requiredString(body.id, "id");
    const name = requiredString(body.name, "name");
    const outcome = state.directory.rename(kind, id, name);
    if (outcome === "unknown") throw restError(404, `No ${kind} has the id "${id}"`);
    if (outcome === "taken") throw restError(409, `Another ${kind} is named "${name}" already`);
    sendJson(res, 200, { kind, id, name });
  });

  return router;
}
