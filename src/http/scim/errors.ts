import type { IncomingMessage, ServerResponse } from "node:http";
import { AppError, isTransientDatabaseError, sqlState, type ScimType } from "../../errors.js";
import { log } from "../../logging/logger.js";
import { sendScimError } from "./respond.js";

/**
 * The one translator from errors to RFC 7644 error responses on /scim. Client mistakes are 4xx
 * with a precise scimType; database errors are classified by SQLSTATE; only a real server fault
 * is a 500, and it is logged.
 */

type Classified = { status: number; detail: string; scimType?: ScimType; retryAfter?: number };

type BodyParserError = { type?: unknown; status?: unknown; expose?: unknown; limit?: unknown };

export function classifyScimError(error: unknown): Classified {
  if (error instanceof AppError) return { status: error.status, detail: error.message, scimType: error.scimType };
  const parser = error as BodyParserError;
  if (
    typeof parser?.type === "string" &&
    typeof parser.status === "number" &&
    parser.status >= 400 &&
    parser.status < 500
  ) {
    if (parser.type === "entity.too.large")
      return { status: 413, detail: `The request body is larger than ${String(parser.limit)} bytes` };
    if (parser.type === "entity.parse.failed")
      return { status: 400, detail: "The request body is not valid JSON", scimType: "invalidSyntax" };
    if (parser.type === "charset.unsupported" || parser.type === "encoding.unsupported") {
      return { status: 415, detail: "The request body must be UTF-8 JSON (application/scim+json or application/json)" };
    }
    return {
      status: parser.status,
      detail: "The request body could not be read",
      scimType: parser.status === 400 ? "invalidSyntax" : undefined,
    };
  }
  // body-parser's other client errors (http-errors, `expose`d): a body that fails to decompress, for one.
  if (typeof parser?.status === "number" && parser.status >= 400 && parser.status < 500 && parser.expose === true) {
    return {
      status: parser.status,
      detail: "The request could not be understood",
      scimType: parser.status === 400 ? "invalidSyntax" : undefined,
    };
  }
  const state = sqlState(error);
  if (state === "23505")
    return { status: 409, detail: "The resource conflicts with an existing one", scimType: "uniqueness" };
  if (state === "23503") return { status: 404, detail: "The resource no longer exists" };
  // Data exceptions (NUL characters, malformed values) and program limits (a value too long to index).
  if (state?.startsWith("22") || state?.startsWith("54"))
    return { status: 400, detail: "A value in the request cannot be stored", scimType: "invalidValue" };
  if (isTransientDatabaseError(error))
    return { status: 503, detail: "The service is temporarily unavailable; retry shortly", retryAfter: 5 };
  return { status: 500, detail: "Internal server error" };
}

/** Answers a failed SCIM request with its RFC 7644 error; `path` is relative to /scim/v2. */
export function answerScimError(error: unknown, req: IncomingMessage, res: ServerResponse, path: string): void {
  const classified = classifyScimError(error);
  if (classified.status >= 500)
    log.error("scim", "request failed", { method: req.method, path, status: classified.status, error });
  else
    log.debug("scim", "request rejected", {
      method: req.method,
      path,
      status: classified.status,
      detail: classified.detail,
    });
  if (res.headersSent) return;
  if (classified.retryAfter) res.setHeader("Retry-After", String(classified.retryAfter));
  sendScimError(res, classified.status, classified.detail, classified.scimType);
}
