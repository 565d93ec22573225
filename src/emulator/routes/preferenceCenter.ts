import type { Request, Response } from "express";
import { rateLimit, requirePermission } from "../pipeline/auth.js";
import { badRequest, bodyObject, sendJson } from "../http.js";
import { RATE_LIMITS } from "../pipeline/rateLimits.js";
import type { PreferenceCenter } from "../state.js";
import type { RouteContext } from "./context.js";

/**
 * `PUT /preference_center/v1/{id}` (and POST, which the document's sample uses): creates the
 * center when the id is new, otherwise replaces its content. 10 requests per minute per workspace
 * (one API key is one workspace), shared by both methods.
 */

type PreferenceCenterBody = Omit<
  PreferenceCenter,
  "preference_center_api_id" | "created_at" | "updated_at" | "state"
> & { state?: PreferenceCenter["state"] };

/** Pure: the body rules of the endpoint. */
function parsePreferenceCenterBody(body: Record<string, unknown>): PreferenceCenterBody {
  const html = (field: string): string => {
    const value = body[field];
    if (typeof value !== "string" || value.trim() === "") throw badRequest(`${field} is required`);
    return value;
  };
  const title = body.preference_center_title ?? "Preference Center";
  if (typeof title !== "string") throw badRequest("preference_center_title must be a string");
  if (body.state !== undefined && body.state !== "active" && body.state !== "draft")
    throw badRequest("state must be active or draft");
  if (body.name !== undefined && (typeof body.name !== "string" || body.name === ""))
    throw badRequest("name must be a non-empty string");
  const options = body.options ?? {};
  if (typeof options !== "object" || options === null || Array.isArray(options))
    throw badRequest("options must be an object");
  for (const [key, value] of Object.entries(options)) {
    if (key !== "meta-viewport-content") throw badRequest(`unknown option: ${key}`);
    if (typeof value !== "string")
      throw badRequest("options.meta-viewport-content must be a string (the content value only)");
  }
  return {
    name: body.name as string | undefined,
    preference_center_title: title,
    preference_center_page_html: html("preference_center_page_html"),
    confirmation_page_html: html("confirmation_page_html"),
    state: body.state as PreferenceCenter["state"] | undefined,
    options: options as Record<string, unknown>,
  };
}

export function preferenceCenterRoutes({ state, auth, route }: RouteContext): void {
  const handler = (req: Request, res: Response) => {
    const id = String(req.params.preferenceCenterExternalID);
    const input = parsePreferenceCenterBody(bodyObject(req));
    const now = state.clock.now().toISOString();
    const existing = state.preferenceCenters.get(id);
    const center: PreferenceCenter = {
      ...input,
      preference_center_api_id: id,
      name: input.name ?? existing?.name,
      state: input.state ?? existing?.state ?? "active",
      created_at: existing?.created_at ?? now,
      updated_at: now,
    };
    state.preferenceCenters.set(id, center);
    sendJson(res, 200, {
      preference_center_api_id: id,
      created_at: center.created_at,
      updated_at: center.updated_at,
      message: "success",
    });
  };
  const guard = [
    requirePermission(auth, "preference_center.update"),
    rateLimit(state, RATE_LIMITS.preferenceCenter, { perWorkspace: true }),
  ];
  const template = "/preference_center/v1/{preferenceCenterExternalID}";
  route("put", "/preference_center/v1/:preferenceCenterExternalID", template, ...guard, handler);
  route("post", "/preference_center/v1/:preferenceCenterExternalID", template, ...guard, handler);
}
