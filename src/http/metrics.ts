import { createHash, timingSafeEqual } from "node:crypto";
import { Router, type Request } from "express";
import type { ServiceMetrics } from "../metrics/index.js";
import { isDirectLoopbackRequest } from "./admin/exposure.js";

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
