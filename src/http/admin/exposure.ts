import { ConfigError, type Env } from "../../config/env.js";

/**
 * Local mode (no SAML) signs admins in with one shared token, which is only safe where nobody
 * else can reach the port. These checks keep that promise at boot and on every request.
 */

export type AdminAuthMode = "saml" | "local";

const SAML_KEYS = ["SAML_ENTRY_POINT", "SAML_ISSUER", "SAML_IDP_CERT", "SAML_CALLBACK_URL"] as const;

/** "saml" when all four SAML settings are present, "local" when none is; a partial setup is a config error. */
export function adminAuthMode(env: Env): AdminAuthMode {
  const missing = SAML_KEYS.filter((k) => !env[k]);
  if (missing.length === 0) return "saml";
  if (missing.length === SAML_KEYS.length) return "local";
  throw new ConfigError(
    missing.map((k) => `${k}: is required when any SAML_* setting is given (SAML sign-in for the admin UI)`),
  );
}

export function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host === "::1" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  return address === "::1" || /^(::ffff:)?127\.\d+\.\d+\.\d+$/.test(address);
}

/**
 * True when the request comes from this machine and not through a proxy. A reverse proxy on
 * the same host also connects from loopback, so the socket address alone would let the whole
 * world in through it; the forwarding headers every usual proxy adds (X-Forwarded-For,
 * Forwarded, X-Real-IP) say that it did. Used by the loopback-only surfaces: local-mode admin
 * sign-in and /metrics without METRICS_TOKEN.
 */
export function isDirectLoopbackRequest(req: {
  socket: { remoteAddress?: string };
  headers: Record<string, unknown>;
}): boolean {
  if (!isLoopbackAddress(req.socket.remoteAddress)) return false;
  return (
    req.headers["x-forwarded-for"] === undefined &&
    req.headers.forwarded === undefined &&
    req.headers["x-real-ip"] === undefined
  );
}

/**
 * The host the server should listen on. In local mode without ADMIN_ALLOW_REMOTE: loopback when
 * HOST was not set explicitly, and a ConfigError when it was set to something else.
 * `raw` is the unparsed environment, to tell an explicit HOST from the default.
 */
export function resolveListenHost(env: Env, raw: NodeJS.ProcessEnv = process.env): string {
  if (adminAuthMode(env) === "saml" || env.ADMIN_ALLOW_REMOTE) return env.HOST;
  if (!raw.HOST) return "127.0.0.1";
  assertAdminExposureSafe(env);
  return env.HOST;
}

/**
 * Throws a ConfigError when local admin sign-in would be reachable from other machines. A process
 * without the `web` role serves no admin UI (only /healthz, /readyz and /metrics, which has its
 * own check), so any HOST is safe for it: a Kubernetes worker pod listens on 0.0.0.0 for its probes.
 */
export function assertAdminExposureSafe(env: Env): void {
  if (!env.ROLES.has("web")) return;
  if (adminAuthMode(env) === "saml" || env.ADMIN_ALLOW_REMOTE || isLoopbackHost(env.HOST)) return;
  throw new ConfigError([
    `HOST: is ${env.HOST}, but the admin UI is in local mode (ADMIN_TOKEN sign-in, no SAML) and must listen on loopback only. ` +
      `Set HOST=127.0.0.1, configure SAML_ENTRY_POINT, SAML_ISSUER, SAML_IDP_CERT and SAML_CALLBACK_URL, or set ADMIN_ALLOW_REMOTE=true.`,
  ]);
}
