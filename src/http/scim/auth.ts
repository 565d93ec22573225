import type { NextFunction, Request, Response } from "express";
import type { ScimTokenVerifier } from "../../auth/scimTokens.js";
import { sendScimError } from "./respond.js";

const BEARER = /^Bearer +([\x21-\x7e]{1,512}) *$/i;

/** Bearer-token authentication for every SCIM endpoint; 401 with WWW-Authenticate otherwise (RFC 6750). */
export function requireScimToken(verifier: ScimTokenVerifier) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const match = BEARER.exec(req.headers.authorization ?? "");
    try {
      if (match && (await verifier.verify(match[1]!))) return next();
    } catch (error) {
      return next(error);
    }
    res.setHeader("WWW-Authenticate", 'Bearer realm="scim"');
    sendScimError(res, 401, match ? "The bearer token is not valid" : "A bearer token is required (Authorization: Bearer <token>)");
  };
}
