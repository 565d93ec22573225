import type { IncomingMessage, ServerResponse } from "node:http";
import express from "express";
import { AppError, BadRequestError } from "../../errors.js";

/**
 * Request bodies: JSON as application/scim+json or application/json (or no content type at all),
 * at most `maxBytes`, at most MAX_DEPTH levels deep (deeper input would only exercise recursion).
 * Anything else is a 4xx before a handler runs. The reading itself is body-parser's (Express's
 * `express.json`: limits, charsets, gzip and deflate), called directly on node's request.
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

/** The JSON body of a POST, PUT or PATCH, checked; rejects with the 4xx to answer. */
export function scimBodyReader(maxBytes: number): (req: IncomingMessage, res: ServerResponse) => Promise<unknown> {
  const json = express.json({ limit: maxBytes, type: isJsonRequest, strict: true });
  const check = (req: IncomingMessage & { body?: unknown }): unknown => {
    if (req.body === undefined) {
      const hasBody = req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0;
      throw hasBody && !isJsonRequest(req)
        ? new UnsupportedMediaTypeError()
        : new BadRequestError("A JSON request body is required", "invalidSyntax");
    }
    if (depthOf(req.body) > MAX_DEPTH)
      throw new BadRequestError(`The request body is nested deeper than ${MAX_DEPTH} levels`, "invalidSyntax");
    return req.body;
  };
  return (req, res) =>
    new Promise((resolve, reject) => {
      json(req as express.Request, res as express.Response, (error?: unknown) => {
        if (error !== undefined) return reject(error);
        try {
          resolve(check(req));
        } catch (invalid) {
          reject(invalid);
        }
      });
    });
}
