import express, { Router, type Express, type RequestHandler } from "express";
import type { AuthConfig } from "./pipeline/auth.js";
import { controlRouter } from "./control.js";
import { faultMiddleware } from "./pipeline/faults.js";
import { errorRenderer, makeRegistrar, restError } from "./http.js";
import type { RouteContext } from "./routes/context.js";
import { cdiRoutes } from "./routes/cdi.js";
import { emailRoutes } from "./routes/email.js";
import { preferenceCenterRoutes } from "./routes/preferenceCenter.js";
import { scimRoutes } from "./routes/scim.js";
import { smsRoutes } from "./routes/sms.js";
import { subscriptionRoutes } from "./routes/subscriptions.js";
import { userRoutes } from "./routes/users.js";
import type { SecurityExporter } from "./security/export.js";
import type { EmulatorState } from "./state.js";

/**
 * The emulator's Express app. Each platform route runs: count under its path template →
 * injected faults → authentication → rate limit → handler. The control plane sits beside it.
 */

const routeModules: Array<(ctx: RouteContext) => void> = [
  scimRoutes,
  emailRoutes,
  subscriptionRoutes,
  preferenceCenterRoutes,
  smsRoutes,
  userRoutes,
  cdiRoutes,
];

export function createEmulatorApp(state: EmulatorState, auth: AuthConfig, exporter?: SecurityExporter): Express {
  const app = express();
  app.disable("x-powered-by");
  app.disable("etag");
  app.use(express.json({ limit: "2mb", type: ["application/json", "application/*+json"] }));
  app.use("/_emulator", controlRouter(state, exporter));

  const platform = Router();
  const faults = faultMiddleware(state.faults);
  // Counting and fault injection share one middleware: every layer costs on the hot path.
  const route = makeRegistrar(platform, (key): RequestHandler[] => [
    (req, res, next) => {
      state.countRequest(key);
      faults(req, res, next);
    },
  ]);
  for (const register of routeModules) register({ state, auth, route });
  app.use(platform);

  app.use(() => {
    throw restError(404, "Not found");
  });
  app.use(errorRenderer("/scim/"));
  return app;
}
