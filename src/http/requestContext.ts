import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import type { NextFunction, Request, Response } from "express";
import { isLogLevelEnabled, log, withLogContext } from "../logging/logger.js";

const REQUEST_ID = /^[\w.-]{1,100}$/;

// The response of the request whose code is running, so that a failure that escapes every
// handler (a throw in a discarded promise) can still be answered: see src/processGuards.ts.
const inFlight = new AsyncLocalStorage<Response>();

/** Gives every request an id (a sane incoming X-Request-Id, or a new one) and logs its outcome. */
export function requestContext(req: Request, res: Response, next: NextFunction): void {
  const incoming = req.headers["x-request-id"];
  const requestId = typeof incoming === "string" && REQUEST_ID.test(incoming) ? incoming : randomUUID();
  res.locals.requestId = requestId;
  res.setHeader("X-Request-Id", requestId);
  const started = process.hrtime.bigint();
  res.on("finish", () => logOutcome(req, res, requestId, started));
  withLogContext({ requestId }, () => inFlight.run(res, next));
}

/** The request line: a warning for a 5xx, else debug; its fields are built only when it is written. */
function logOutcome(req: Request, res: Response, requestId: string, started: bigint): void {
  const level = res.statusCode >= 500 ? "warn" : "debug";
  if (!isLogLevelEnabled(level)) return;
  const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
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
  return inFlight.getStore();
}
