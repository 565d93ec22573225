import type { Database } from "../db/database.js";
import type { Clock } from "../clock.js";
import type { Env } from "../config/env.js";
import { log } from "../logging/logger.js";
import type { HttpTransport } from "../platform/transport.js";
import type { QuarantineGate } from "../platform/quarantine.js";
import { PlatformRestClient } from "../platform/rest.js";
import { workspaceApiKeys } from "./config.js";
import { MirrorSyncWorker } from "./worker.js";
import type { MirrorMetrics } from "./metrics.js";

export { MirrorSyncWorker } from "./worker.js";

/**
 * The mirror sync for this process, from the environment: `default` pushes email and
 * subscription-group states with PLATFORM_API_KEY; preference centers use their workspace's key
 * from PLATFORM_WORKSPACE_API_KEYS. Undefined (and a log line) when no REST API key is configured.
 * The caller starts it (`start()`) and stops it on shutdown (`stop()`).
 */
export function createMirrorSync(deps: {
  env: Pick<Env, "PLATFORM_API_KEY" | "PLATFORM_WORKSPACE_API_KEYS"> & Partial<Pick<Env, "MIRROR_LEASE_MS">>;
  db: Database;
  clock: Clock;
  transport: HttpTransport;
  gate?: QuarantineGate;
  /** The worker's counters on the service's registry (`ServiceMetrics.mirror`). */
  metrics?: MirrorMetrics;
}): MirrorSyncWorker | undefined {
  const apiKeys = workspaceApiKeys(deps.env);
  if (Object.keys(apiKeys).length === 0) {
    log.warn("mirror", "mirror sync off: set PLATFORM_API_KEY (and PLATFORM_WORKSPACE_API_KEYS for other workspaces)");
    return undefined;
  }
  return new MirrorSyncWorker({
    db: deps.db,
    rest: new PlatformRestClient(deps.transport),
    apiKeys,
    clock: deps.clock,
    leaseMs: deps.env.MIRROR_LEASE_MS,
    ...(deps.gate ? { gate: deps.gate } : {}),
    ...(deps.metrics ? { metrics: deps.metrics } : {}),
  });
}
