import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { bindLogContext, currentLogContext, isLogLevelEnabled, log, withLogContext } from "../logging/logger.js";
import type { ServiceMetrics } from "../metrics/index.js";
import { methodLabel, statusClass } from "../metrics/scimRoutes.js";

const REQUEST_ID = /^[\w.-]{1,100}$/;

/**
 * What a request carries in `res.locals` (Express's place for it, which Express keeps when it
 * finds it set) from its start to its `finish`: its id, its start, and for a SCIM request the
 * route label of the latency histogram.
 */
type RequestLocals = {
  requestId: string;
  /** performance.now() at arrival, in ms. */ started: number;
  scimRoute?: string;
};

type WithLocals = ServerResponse & { locals: RequestLocals };

/** The locals of a response that went through `requestContext`. */
export function localsOf(res: ServerResponse): RequestLocals {
  return (res as WithLocals).locals;
}

/**
 * Runs before every surface (SCIM, Express's admin, health and metrics): gives the request an id (a
 * sane incoming X-Request-Id, or a new one) and, on `finish`, logs its outcome and times it in the
 * SCIM latency histogram when the SCIM server named its route. The log context also carries the
 * response, so that a failure that escapes every handler (a throw in a discarded promise) can still
 * be answered: see src/processGuards.ts. The request's and the response's events (a body chunk that
 * arrives late, an abort, a drain) run in that context as well, so a parser or stream listener that
 * throws fails its own request, not the process. One store and one listener per request, the
 * listener built once, and no closure.
 */
export function requestContext(
  metrics?: ServiceMetrics,
): (req: IncomingMessage, res: ServerResponse, next: () => void) => void {
  function onFinish(this: ServerResponse): void {
    const { requestId, started, scimRoute } = localsOf(this);
    const elapsedMs = performance.now() - started;
    if (metrics && scimRoute !== undefined) {
      metrics.scimRequestDuration.observe(
        { method: methodLabel(this.req.method ?? ""), route: scimRoute, status_class: statusClass(this.statusCode) },
        elapsedMs / 1000,
      );
    }
    logOutcome(this.req, this, requestId, elapsedMs);
  }
  return (req, res, next) => {
    const incoming = req.headers["x-request-id"];
    const requestId = typeof incoming === "string" && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    (res as WithLocals).locals = { requestId, started: performance.now() };
    res.setHeader("X-Request-Id", requestId);
    res.on("finish", onFinish); // `finish` comes once: no once-wrapper to allocate
    withLogContext({ requestId, response: res }, serveInContext, req, res, next);
  };
}

/**
 * The request's first moment in its context. The body's chunks, its end or abort, and the
 * response's drain and close come from socket reads and writes that happen after it: they run
 * in the request's context too.
 */
function serveInContext(req: IncomingMessage, res: ServerResponse, next: () => void): void {
  bindLogContext(req);
  bindLogContext(res);
  next();
}

/** The request line: a warning for a 5xx, else debug; its fields are built only when it is written. */
function logOutcome(req: IncomingMessage, res: ServerResponse, requestId: string, durationMs: number): void {
  const level = res.statusCode >= 500 ? "warn" : "debug";
  if (!isLogLevelEnabled(level)) return;
  // Express rewrites req.url inside its routers and keeps the original in originalUrl.
  const url = (req as IncomingMessage & { originalUrl?: string }).originalUrl ?? req.url ?? "";
  const fields = {
    method: req.method,
    path: url.split("?", 1)[0],
    status: res.statusCode,
    durationMs: Math.round(durationMs * 10) / 10,
  };
  withLogContext({ requestId }, () => log[level]("http", "request", fields));
}

/** The response of the request this code runs for, when it runs for one. */
export function currentResponse(): ServerResponse | undefined {
  return currentLogContext().response as ServerResponse | undefined;
}
