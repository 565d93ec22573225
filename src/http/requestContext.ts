import { randomUUID } from "node:crypto";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import { currentLogContext, isLogLevelEnabled, log, withLogContext } from "../logging/logger.js";
import type { ServiceMetrics } from "../metrics/index.js";
import { methodLabel, statusClass } from "../metrics/scimRoutes.js";

const REQUEST_ID = /^[\w.-]{1,100}$/;

/** What a request carries in `res.locals` from its start to its `finish`. */
type RequestLocals = { requestId: string; started: bigint; scimRoute?: string };

/**
 * Gives every request an id (a sane incoming X-Request-Id, or a new one) and, on `finish`, logs its
 * outcome and times it in the SCIM latency histogram when the SCIM server set `res.locals.scimRoute`.
 * The log context also carries the response, so that a failure that escapes every handler (a throw
 * in a discarded promise) can still be answered: see src/processGuards.ts. One store and one
 * listener per request, the listener built once.
 */
export function requestContext(metrics?: ServiceMetrics): RequestHandler {
  function onFinish(this: Response): void {
    const { requestId, started, scimRoute } = this.locals as RequestLocals;
    const elapsed = process.hrtime.bigint() - started;
    if (metrics && scimRoute !== undefined) {
      metrics.scimRequestDuration.observe(
        { method: methodLabel(this.req.method), route: scimRoute, status_class: statusClass(this.statusCode) },
        Number(elapsed) / 1e9,
      );
    }
    logOutcome(this.req, this, requestId, elapsed);
  }
  return (req: Request, res: Response, next: NextFunction): void => {
    const incoming = req.headers["x-request-id"];
    const requestId = typeof incoming === "string" && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.locals.requestId = requestId;
    res.locals.started = process.hrtime.bigint();
    res.setHeader("X-Request-Id", requestId);
    res.on("finish", onFinish); // `finish` comes once: no once-wrapper to allocate
    withLogContext({ requestId, response: res }, next);
  };
}

/** The request line: a warning for a 5xx, else debug; its fields are built only when it is written. */
function logOutcome(req: Request, res: Response, requestId: string, elapsed: bigint): void {
  const level = res.statusCode >= 500 ? "warn" : "debug";
  if (!isLogLevelEnabled(level)) return;
  const durationMs = Number(elapsed) / 1e6;
  const fields = {
    method: req.method,
    path: req.path,
    status: res.statusCode,
    durationMs: Math.round(durationMs * 10) / 10,
  };
  withLogContext({ requestId }, () => log[level]("http", "request", fields));
}

/** The response of the request this code runs for, when it runs for one. */
export function currentResponse(): Response | undefined {
  return currentLogContext().response as Response | undefined;
}
