import type { NextFunction, Request, RequestHandler, Response, Router } from "express";
import { log } from "../logging/logger.js";

/**
 * Small HTTP vocabulary of the emulator: one error type that carries the exact status, body and
 * content type the platform document prescribes, and a route helper that counts each request
 * under its documented path template before anything else can reject it.
 */

const SCIM_ERROR_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:Error";

export class EmulatorHttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly contentType = "application/json; charset=utf-8",
    readonly headers: Record<string, string> = {},
  ) {
    super(
      typeof body === "object" && body && "message" in body
        ? String((body as { message: unknown }).message)
        : `HTTP ${status}`,
    );
  }
}

/** A REST error: `{ "message": ... }`. */
export function restError(status: number, message: string, headers?: Record<string, string>): EmulatorHttpError {
  return new EmulatorHttpError(status, { message }, undefined, headers);
}

/** Shorthand for the 400 every bound or shape violation gets. */
export function badRequest(message: string): EmulatorHttpError {
  return restError(400, message);
}

/** A SCIM error body as the document shows it (409 and 404). */
export function scimError(status: number, detail: string, contentType?: string, scimType?: string): EmulatorHttpError {
  const body: Record<string, unknown> = { schemas: [SCIM_ERROR_SCHEMA], detail, status };
  if (scimType) body.scimType = scimType;
  return new EmulatorHttpError(status, body, contentType);
}

/** Writes JSON directly: Express's res.send re-parses the content type and checks freshness on every call, which the hot path does not need. */
export function sendJson(res: Response, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("Content-Length", Buffer.byteLength(text));
  res.end(text);
}

type Method = "get" | "post" | "put" | "delete";

/** Per-route pipeline entry: counted under `template` (the document's spelling, e.g. `/scim/v2/Users/{id}`). */
export type RouteRegistrar = (
  method: Method,
  expressPath: string,
  template: string,
  ...handlers: RequestHandler[]
) => void;

export function makeRegistrar(router: Router, before: (template: string) => RequestHandler[]): RouteRegistrar {
  return (method, expressPath, template, ...handlers) => {
    router[method](expressPath, pipeline([...before(`${method.toUpperCase()} ${template}`), ...handlers]));
  };
}

/**
 * Runs a route's handlers as one Express layer. Express pays per layer (matching, promise
 * checks); the emulator's pipelines are synchronous except for an injected delay, so a plain
 * index walk is enough. A throw, in the first call or after a delay, goes to the error renderer.
 */
function pipeline(handlers: RequestHandler[]): RequestHandler {
  return (req, res, done) => {
    let index = 0;
    const next = (error?: unknown): void => {
      if (error !== undefined) return done(error);
      const handler = handlers[index++];
      if (!handler) return done();
      try {
        void handler(req, res, next);
      } catch (thrown) {
        done(thrown);
      }
    };
    next();
  };
}

/** Renders EmulatorHttpError; a malformed JSON body is a 400 with a message; anything else is a 500 (a bug). */
export function errorRenderer(scimPrefix: string) {
  return (error: unknown, req: Request, res: Response, _next: NextFunction): void => {
    if (res.headersSent) return;
    let rendered: EmulatorHttpError;
    if (error instanceof EmulatorHttpError) rendered = error;
    else if (isBodyParserError(error)) {
      const [status, message] = bodyErrorAnswer(error);
      rendered = req.path.startsWith(scimPrefix)
        ? scimError(status, message, undefined, "invalidSyntax")
        : restError(status, message);
    } else {
      log.error("emulator", "unhandled error in a route", { error, method: req.method, path: req.path });
      rendered = restError(500, "Internal emulator error");
    }
    for (const [name, value] of Object.entries(rendered.headers)) res.setHeader(name, value);
    // A Buffer keeps the content type byte-exact (Express would rewrite `charset=UTF-8` on a string).
    res.status(rendered.status).setHeader("Content-Type", rendered.contentType);
    res.send(Buffer.from(JSON.stringify(rendered.body)));
  };
}

function bodyErrorAnswer(error: { type: string; status: number }): [number, string] {
  if (error.type === "entity.parse.failed") return [400, "Malformed JSON body"];
  if (error.type === "entity.too.large") return [413, "Request body too large"];
  return [error.status >= 400 && error.status < 500 ? error.status : 400, "Unreadable request body"];
}

function isBodyParserError(error: unknown): error is { type: string; status: number } {
  return (
    typeof error === "object" &&
    error !== null &&
    typeof (error as { type?: unknown }).type === "string" &&
    typeof (error as { status?: unknown }).status === "number"
  );
}

/** The request body as an object, or a 400. A missing body reads as `{}` so field rules report what is missing. */
export function bodyObject(req: Request): Record<string, unknown> {
  const body: unknown = req.body ?? {};
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw badRequest("Request body must be a JSON object");
  return body as Record<string, unknown>;
}
