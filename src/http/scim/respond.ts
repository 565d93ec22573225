import type { Response } from "express";
import { ERROR_SCHEMA, LIST_RESPONSE_SCHEMA } from "../../scim/schemas.js";
import type { ScimType } from "../../errors.js";

/** Every SCIM response is application/scim+json (RFC 7644 3.1). */
export function sendScim(res: Response, status: number, body: unknown): void {
  res.status(status);
  res.setHeader("Content-Type", "application/scim+json; charset=utf-8");
  res.end(JSON.stringify(body));
}

export function sendScimError(res: Response, status: number, detail: string, scimType?: ScimType): void {
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
