import { createHash, timingSafeEqual } from "node:crypto";
import { Router, type Request } from "express";
import type { ServiceMetrics } from "../metrics/index.js";
import { ConfigError } from "../config/env.js";
import { isDirectLoopbackRequest, isLoopbackHost } from "./admin/exposure.js";

/**
 * GET /metrics (Prometheus text). This service holds the keys to a company's dashboard, so even
 * its metrics let no one in: with METRICS_TOKEN set, a scraper sends `Authorization: Bearer
 * <METRICS_TOKEN>`; without it, only a caller on this machine that did not come through a proxy
 * is answered (isDirectLoopbackRequest, shared with local-mode admin sign-in).
 */
export function metricsRouter(metrics: ServiceMetrics, token: string | undefined): Router {
  const router = Router();
  const expected = token ? digest(token) : undefined;
  router.get("/metrics", async (req, res) => {
    if (!allowed(req, expected)) {
      if (expected) res.setHeader("WWW-Authenticate", 'Bearer realm="scim-connector metrics"');
      res
        .status(expected ? 401 : 403)
        .type("text/plain")
        .send(
          expected
            ? "Send Authorization: Bearer <METRICS_TOKEN>.\n"
            : "Set METRICS_TOKEN to scrape from another host.\n",
        );
      return;
    }
    res.setHeader("Cache-Control", "no-store");
    res.type(metrics.contentType).send(await metrics.render());
  });
  return router;
}

function allowed(req: Request, expected: Buffer | undefined): boolean {
  if (expected) {
    const match = /^Bearer\s+(.+)$/i.exec(req.get("authorization") ?? "");
    return match !== null && timingSafeEqual(digest(match[1]!.trim()), expected);
  }
  return isDirectLoopbackRequest(req);
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}

/**
 * Without METRICS_TOKEN, /metrics trusts that a loopback caller with no forwarding header is on
 * this machine; a forwarder that adds no header (socat, `ssh -L`, nginx `stream {}`) breaks that.
 * On a loopback-only listener such a forwarder takes someone already on the host; beyond
 * loopback the boot asks for the token instead of that trust (docs/operations.md, "Metrics").
 */
export function assertMetricsTokenBeyondLoopback(listenHost: string, token: string | undefined): void {
  if (token || isLoopbackHost(listenHost)) return;
  throw new ConfigError([
    `METRICS_TOKEN: required when the service listens beyond loopback (HOST=${listenHost}); set a random secret of at least 16 characters (e.g. openssl rand -base64 32) for the scraper, or set HOST=127.0.0.1`,
  ]);
}
