import type { Response } from "express";
import { ERROR_SCHEMA } from "../../scim/schemas.js";
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
