import express, { type Express } from "express";
import type { DataSource } from "typeorm";
import type { Clock } from "../clock.js";
import type { Env } from "../config/env.js";
import { adminRouter } from "./admin/index.js";
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
};

export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", "loopback");
  app.use(requestContext);
  app.use(healthRouter(deps.db));
  app.use("/scim/v2", scimRouter(deps));
  app.use("/admin", adminRouter(deps));
  return app;
}
