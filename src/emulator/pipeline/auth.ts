import type { RequestHandler } from "express";
import { restError, scimError } from "../http.js";
import type { RateLimitRule } from "./rateLimits.js";
import { rateLimitHeaders } from "./rateLimits.js";
import type { EmulatorState } from "../state.js";

/**
 * Authentication of the two kinds of caller: REST API keys with permissions (401 for a missing
 * or unknown key, 403 for a key without the endpoint's permission) and SCIM bearer tokens with
 * `X-Request-Origin`. Keys are looked up in a Map built once at start, never per request.
 */

export type AuthConfig = {
  /** key → "*" (every permission) or the set of permission names. */
  apiKeys: Map<string, "*" | Set<string>>;
  scimToken: string;
  /** Allowed `X-Request-Origin` values; empty = any non-empty value. */
  requestOrigins: Set<string>;
};

export function buildAuthConfig(options: {
  apiKeys?: Record<string, "*" | string[]>;
  scimToken?: string;
  requestOrigins?: string[];
}): AuthConfig {
  const apiKeys = new Map<string, "*" | Set<string>>();
  for (const [key, grant] of Object.entries(options.apiKeys ?? { "dev-api-key": "*" })) {
    apiKeys.set(key, grant === "*" ? "*" : new Set(grant));
  }
  return {
    apiKeys,
    scimToken: options.scimToken ?? "dev-scim-token",
    requestOrigins: new Set(options.requestOrigins ?? []),
  };
}

function bearer(header: string | undefined): string | undefined {
  if (!header || !header.startsWith("Bearer ")) return undefined;
  const token = header.slice(7).trim();
  return token || undefined;
}

/** REST endpoints: the key must exist (401) and carry `permission` (403). The key names the workspace. */
export function requirePermission(config: AuthConfig, permission: string): RequestHandler {
  return (req, res, next) => {
    const key = bearer(req.headers.authorization);
    if (!key) throw restError(401, "Missing API key: send Authorization: Bearer <API_KEY>");
    const grant = config.apiKeys.get(key);
    if (!grant) throw restError(401, "Invalid API key");
    if (grant !== "*" && !grant.has(permission))
      throw restError(403, `This API key does not have the ${permission} permission`);
    res.locals.workspace = key;
    next();
  };
}

/** SCIM endpoints: the SCIM token (401) and a non-empty, allowed X-Request-Origin (401). */
export function requireScimToken(config: AuthConfig): RequestHandler {
  return (req, _res, next) => {
    const token = bearer(req.headers.authorization);
    if (!token || token !== config.scimToken) throw scimError(401, "Invalid or missing SCIM token");
    const origin = req.headers["x-request-origin"];
    if (typeof origin !== "string" || origin.trim() === "") throw scimError(401, "Missing X-Request-Origin header");
    if (config.requestOrigins.size > 0 && !config.requestOrigins.has(origin))
      throw scimError(401, "X-Request-Origin is not allowed for this SCIM token");
    next();
  };
}

/** Counts the request in its bucket on the emulator clock; 429 with Retry-After when over. */
export function rateLimit(
  state: EmulatorState,
  rule: RateLimitRule,
  options: { perWorkspace?: boolean; scim?: boolean } = {},
): RequestHandler {
  return (_req, res, next) => {
    const scope = options.perWorkspace ? String(res.locals.workspace ?? "") : "";
    const decision = state.rateLimiter.take(rule, state.nowMs(), scope);
    const headers = rateLimitHeaders(decision);
    if (!decision.allowed) {
      const error = options.scim
        ? scimError(429, "Rate limit exceeded: 5,000 SCIM requests per day")
        : restError(429, "Rate limit exceeded");
      Object.assign(error.headers, headers);
      throw error;
    }
    res.set(headers);
    next();
  };
}
