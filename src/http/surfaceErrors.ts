import type { IncomingMessage, ServerResponse } from "node:http";
import type { NextFunction, Request, Response } from "express";
import { log } from "../logging/logger.js";
import { renderMessagePage } from "./admin/ui/render.js";
import { scimTarget } from "./scim/index.js";
import { sendScimError } from "./scim/respond.js";

/**
 * The last word on a request that nothing else answered: an error no surface translated (it
 * escaped the surface's own handler, or came from a failure outside every handler, see
 * src/processGuards.ts) or a path no router serves. Each surface gets its own shape — an
 * RFC 7644 error under /scim, JSON under /admin/api and elsewhere, a page under /admin — and
 * never a stack trace, whatever NODE_ENV says (Express's default handler prints one outside
 * production).
 */

type Surface = "scim" | "admin-api" | "admin-ui" | "other";

function surfaceOf(req: IncomingMessage & { originalUrl?: string }): Surface {
  const path = req.originalUrl ?? req.url ?? "";
  if (scimTarget(path)) return "scim";
  if (/^\/admin\/api(\/|\?|$)/.test(path)) return "admin-api";
  if (/^\/admin(\/|\?|$)/.test(path)) return "admin-ui";
  return "other";
}

/**
 * Answers `res` with a generic error in its surface's shape; nothing when an answer has begun. A
 * SCIM response is node's own (src/http/scim runs without Express); the others went through Express.
 */
export function answerWithoutDetail(req: IncomingMessage, res: ServerResponse, status: number): void {
  if (res.headersSent) {
    // Half an answer is worse than none: the client must see the connection fail.
    if (!res.writableEnded) res.destroy();
    return;
  }
  const reference = String((res as Partial<Response>).locals?.requestId ?? "");
  const client = status < 500;
  switch (surfaceOf(req)) {
    case "scim":
      return sendScimError(
        res,
        status,
        client ? "The request could not be understood" : "Internal server error",
        client && status === 400 ? "invalidSyntax" : undefined,
      );
    case "admin-ui":
      return client
        ? renderMessagePage(
            res as Response,
            status,
            status === 404 ? "Not found" : "Request refused",
            "The request could not be understood.",
          )
        : renderMessagePage(
            res as Response,
            500,
            "Something went wrong",
            `The page could not be shown. Reference: ${reference}`,
          );
    default:
      (res as Response)
        .status(status)
        .json(
          client
            ? { error: "BadRequest", message: "The request could not be understood" }
            : { error: "InternalError", message: `Something went wrong; reference ${reference}` },
        );
  }
}

/** Paths that no router serves. */
export function notFound(req: Request, res: Response): void {
  if (surfaceOf(req) === "admin-ui")
    return renderMessagePage(res, 404, "Not found", "There is no admin page at this address.");
  res.status(404).json({ error: "NotFound", message: "No such route" });
}

/** Express's final error handler for the whole app. */
export function finalErrorHandler(error: unknown, req: Request, res: Response, _next: NextFunction): void {
  const status =
    (error as { status?: unknown; statusCode?: unknown } | undefined)?.status ??
    (error as { statusCode?: unknown } | undefined)?.statusCode;
  const client = typeof status === "number" && status >= 400 && status < 500;
  if (!client)
    log.error("http", "request failed outside its surface's error handler", {
      method: req.method,
      path: req.path,
      error,
    });
  answerWithoutDetail(req, res, client ? status : 500);
}
