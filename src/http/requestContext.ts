import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import type { NextFunction, Request, Response } from "express";
import { log, withLogContext } from "../logging/logger.js";

const REQUEST_ID = /^[\w.-]{1,100}$/;

// The response of the request whose code is running, so that a failure that escapes every
// handler (a throw in a discarded promise) can still be answered: see src/processGuards.ts.
const inFlight = new AsyncLocalStorage<Response>();

/** Gives every request an id (a sane incoming X-Request-Id, or a new one) and logs its outcome. */
export function requestContext(req: Request, res: Response, next: NextFunction): void {
  const incoming = req.get("x-request-id");
  const requestId = incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID();
  res.locals.requestId = requestId;
  res.setHeader("X-Request-Id", requestId);
  const started = process.hrtime.bigint();
  withLogContext({ requestId }, () => {
    res.on("finish", () => {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      const fields = {
        method: req.method,
        path: req.path,
        status: res.statusCode,
        durationMs: Math.round(durationMs * 10) / 10,
      };
      withLogContext({ requestId }, () =>
        res.statusCode >= 500 ? log.warn("http", "request", fields) : log.debug("http", "request", fields),
      );
    });
    inFlight.run(res, next);
  });
}

/** The response of the request this code runs for, when it runs for one. */
export function currentResponse(): Response | undefined {
  return inFlight.getStore();
}
