import express, { type NextFunction, type Request, type RequestHandler, type Response } from "express";
import { AppError, BadRequestError } from "../../errors.js";

/**
 * Request bodies: JSON as application/scim+json or application/json (or no content type at all),
 * at most `maxBytes`, at most MAX_DEPTH levels deep (deeper input would only exercise recursion).
 * Anything else is a 4xx before a handler runs.
 */

const MAX_DEPTH = 32;
const JSON_TYPE = /^application\/(scim\+)?json\s*(;|$)/i;

function isJsonRequest(req: { headers: { "content-type"?: string } }): boolean {
  const type = req.headers["content-type"];
  return type === undefined || JSON_TYPE.test(type);
}

function depthOf(value: unknown): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length) {
    const [current, depth] = stack.pop()!;
    if (typeof current !== "object" || current === null) continue;
    deepest = Math.max(deepest, depth);
    if (deepest > MAX_DEPTH) return deepest;
    for (const inner of Object.values(current))
      if (typeof inner === "object" && inner !== null) stack.push([inner, depth + 1]);
  }
  return deepest;
}

class UnsupportedMediaTypeError extends AppError {
  constructor() {
    super("Send the body as application/scim+json or application/json", 415);
  }
}

const WITH_BODY = new Set(["POST", "PUT", "PATCH"]);

export function scimBody(maxBytes: number): RequestHandler {
  const json = express.json({ limit: maxBytes, type: isJsonRequest, strict: true });
  const check = (req: Request, next: NextFunction) => {
    if (req.body === undefined) {
      const hasBody = req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0;
      return next(
        hasBody && !isJsonRequest(req)
          ? new UnsupportedMediaTypeError()
          : new BadRequestError("A JSON request body is required", "invalidSyntax"),
      );
    }
    if (depthOf(req.body) > MAX_DEPTH)
      return next(new BadRequestError(`The request body is nested deeper than ${MAX_DEPTH} levels`, "invalidSyntax"));
    next();
  };
  // Only the methods that carry a resource are parsed: a body on GET or DELETE is never read.
  // One middleware (parse, then check) rather than two: one router layer less on every request.
  return (req: Request, res: Response, next: NextFunction) => {
    if (!WITH_BODY.has(req.method)) return next();
    json(req, res, (error?: unknown) => (error === undefined ? check(req, next) : next(error)));
  };
}
