import type { Server } from "node:http";

/**
 * Every route of a running service, read from its SCIM server's route table and its Express 5
 * router stack (not from a list kept by hand, so a route added tomorrow is covered tomorrow). The
 * app is found through the service's own HTTP server: the one listening on the service's port.
 */

export type RouteEntry = { method: string; path: string };

type Layer = {
  route?: { path: string | string[]; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
  rawPath?: unknown;
};
type ExpressApp = ((...args: unknown[]) => void) & { router?: { stack: Layer[] } };
type ServiceApp = {
  express: ExpressApp;
  scimRoutes: { list(): RouteEntry[] };
};

/** The app (src/http/app.ts) serving `url` in this process. */
export function appListeningOn(url: string): ServiceApp {
  const port = Number(new URL(url).port);
  const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
  for (const handle of handles) {
    const server = handle as Server;
    if (typeof server?.address !== "function" || typeof server.listeners !== "function") continue;
    const address = server.address();
    if (!address || typeof address === "string" || address.port !== port) continue;
    const app = server.listeners("request").find((l) => (l as Partial<ServiceApp>).express !== undefined);
    if (app) return app as unknown as ServiceApp;
  }
  throw new Error(`no app listening on ${url}`);
}

const joinPath = (prefix: string, path: string) =>
  path === "/" ? prefix || "/" : `${prefix}${path}`.replace(/\/{2,}/g, "/");

/** Method and path template of every route: SCIM's, then Express's with mounted routers followed. */
export function enumerateRoutes(app: ServiceApp): RouteEntry[] {
  const out: RouteEntry[] = app.scimRoutes.list().map((r) => ({ method: r.method, path: `/scim/v2${r.path}` }));
  const walk = (stack: Layer[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route) {
        const paths = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
        for (const path of paths) {
          for (const method of Object.keys(layer.route.methods))
            if (method !== "_all") out.push({ method: method.toUpperCase(), path: joinPath(prefix, path) });
        }
      } else if (Array.isArray(layer.handle?.stack)) {
        const mount = typeof layer.rawPath === "string" && layer.rawPath !== "/" ? layer.rawPath : "";
        walk(layer.handle.stack, `${prefix}${mount}`);
      }
    }
  };
  walk(app.express.router!.stack, "");
  const seen = new Set<string>();
  return out.filter((r) => !seen.has(`${r.method} ${r.path}`) && seen.add(`${r.method} ${r.path}`));
}

const SAMPLES: Record<string, string> = {
  decision: "approve",
  family: "scim",
};

/** A concrete path for a template: parameters get plausible values (a UUID unless known). */
export function concretePath(template: string): string {
  return template
    .replace(/\{|\}/g, "")
    .replace(/\*\w+/g, "x")
    .replace(/:(\w+)/g, (_m, name: string) => SAMPLES[name] ?? "6f1f0d7e-0000-4000-8000-000000000000");
}
