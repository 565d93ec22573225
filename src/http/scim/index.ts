import { Router } from "express";
import type { AppDeps } from "../app.js";

/** The IdP-facing SCIM 2.0 server. (Being built: see issue 2.) */
export function scimRouter(_deps: AppDeps): Router {
  return Router();
}
