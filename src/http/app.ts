import express, { type Express } from "express";
import type { Database } from "../db/database.js";
import type { Clock } from "../clock.js";
import type { Env } from "../config/env.js";
import { adminApiRouter, type AdminApiDeps } from "./admin/api/index.js";
import { adminRouter, type AdminActions, type AdminDataSources } from "./admin/index.js";
import type { ServiceMetrics } from "../metrics/index.js";
import { failedAuthThrottle } from "./authThrottle.js";
import { healthRouter } from "./health.js";
import { metricsRouter, scimLatency } from "./metrics.js";
import { requestContext } from "./requestContext.js";
import { scimRouter } from "./scim/index.js";
import { finalErrorHandler, notFound } from "./surfaceErrors.js";

/** What the HTTP layer needs from the rest of the process. Routers take only the parts they use. */
export type AppDeps = {
  env: Env;
  db: Database;
  clock: Clock;
  /** The externally visible base URL (for SCIM `meta.location`), without a trailing slash. */
  publicUrl: string;
  /** The admin JSON API's collaborators (budget policy, reconcile-now, resync, quarantine, notifications, mirror). */
  adminApi: Omit<AdminApiDeps, "db" | "clock" | "adminToken" | "throttle">;
  adminSources: AdminDataSources;
  adminActions: AdminActions;
  /** Served at /metrics (METRICS_TOKEN or loopback only); also times /scim/v2 requests. */
  metrics?: ServiceMetrics;
};

export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", deps.env.TRUST_PROXY);
  app.use(requestContext(deps.metrics));
  // SCIM first: the IdPs' requests are nearly all of the traffic, and no other router serves a path under /scim/v2.
  app.use("/scim/v2", ...(deps.metrics ? [scimLatency] : []), scimRouter(deps));
  app.use(healthRouter(deps.db));
  if (deps.metrics) app.use(metricsRouter(deps.metrics, deps.env.METRICS_TOKEN));
  const adminApiThrottle = failedAuthThrottle(deps.db, deps.env, "admin-api", deps.metrics);
  app.use(
    "/admin/api",
    adminApiRouter({
      ...deps.adminApi,
      db: deps.db,
      clock: deps.clock,
      adminToken: deps.env.ADMIN_TOKEN,
      throttle: adminApiThrottle,
    }),
  );
  app.use("/admin", adminRouter({ ...deps, sources: deps.adminSources, actions: deps.adminActions }));
  app.use(notFound);
  app.use(finalErrorHandler);
  return app;
}
