import type { ServerResponse } from "node:http";
import { ERROR_SCHEMA, LIST_RESPONSE_SCHEMA } from "../../scim/schemas.js";
import type { ScimType } from "../../errors.js";

/** What a SCIM handler answers: a status, a body to send as JSON (none for a 204), and its headers. */
export type ScimReply = { status: number; body?: unknown; etag?: string; location?: string };

/** Every SCIM response is application/scim+json (RFC 7644 3.1). */
function sendScim(res: ServerResponse, status: number, body: unknown): void {
  res.statusCode = status;
  res.setHeader("Content-Type", "application/scim+json; charset=utf-8");
  res.end(JSON.stringify(body));
}

export function sendReply(res: ServerResponse, { status, body, etag, location }: ScimReply): void {
  if (etag !== undefined) res.setHeader("ETag", etag);
  if (location !== undefined) res.setHeader("Location", location);
  if (body !== undefined) return sendScim(res, status, body);
  res.statusCode = status;
  res.end();
}

export function sendScimError(res: ServerResponse, status: number, detail: string, scimType?: ScimType): void {
  sendScim(res, status, { schemas: [ERROR_SCHEMA], status: String(status), ...(scimType ? { scimType } : {}), detail });
}

/** A ListResponse (RFC 7644 3.4.2) for one page of already presented resources. */
export function listResponse(page: { startIndex: number }, totalResults: number, resources: unknown[]) {
  return {
    schemas: [LIST_RESPONSE_SCHEMA],
    totalResults,
    startIndex: page.startIndex,
    itemsPerPage: resources.length,
    Resources: resources,
  };
}
