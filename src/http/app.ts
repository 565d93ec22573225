import express, { type Express } from "express";
import type { DataSource } from "typeorm";
import type { Clock } from "../clock.js";
import type { Env } from "../config/env.js";
import { adminApiRouter, type AdminApiDeps } from "./admin/api/index.js";
import { adminRouter, type AdminActions, type AdminDataSources } from "./admin/index.js";
import { healthRouter } from "./health.js";
import { requestContext } from "./requestContext.js";
import { scimRouter } from "./scim/index.js";

/** What the HTTP layer needs from the rest of the process. Routers take only the parts they use. */
export type AppDeps = {
  env: Env;
  db: DataSource;
  clock: Clock;
  /** The externally visible base URL (for SCIM `meta.location`), without a trailing slash. */
  publicUrl: string;
  /** The admin JSON API's collaborators (budget policy, reconcile-now, extensions). */
  adminApi: Omit<AdminApiDeps, "db" | "clock" | "adminToken">;
  adminSources?: AdminDataSources;
  adminActions?: AdminActions;
};

export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", "loopback");
  app.use(requestContext);
  app.use(healthRouter(deps.db));
  app.use("/scim/v2", scimRouter(deps));
  app.use("/admin/api", adminApiRouter({ ...deps.adminApi, db: deps.db, clock: deps.clock, adminToken: deps.env.ADMIN_TOKEN }));
  app.use("/admin", adminRouter({ ...deps, sources: deps.adminSources, actions: deps.adminActions }));
  return app;
}
