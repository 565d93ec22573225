import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadEnv } from "../../src/config/env.js";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.js";
import { startService, type Service } from "../../src/service.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";

/**
 * A process without the `web` role (the split the docs recommend: `worker,scheduler` replicas)
 * still serves /healthz, /readyz and /metrics, so the image's health check passes and its
 * per-process series (reconcile outcomes, the mirror worker's, process and Node.js metrics) can be
 * scraped; nothing else is served.
 */
describe("probes of a worker-only process", () => {
  let database: TestDatabase;
  let emulator: RunningEmulator;
  let service: Service;

  beforeAll(async () => {
    database = await createTestDatabase();
    emulator = await startEmulator();
    service = await startService({
      env: loadEnv({ PORT: "0", HOST: "127.0.0.1", ROLES: "worker,scheduler", RESYNC_CRON: "off" }),
      databaseUrl: database.url,
      platform: { url: emulator.url, scimToken: "dev-scim-token", apiKey: "dev-api-key", requestOrigin: "probes" },
    });
  });
  afterAll(async () => {
    await service?.close();
    await emulator?.close();
    await database?.drop();
  });

  it("answers /healthz and /readyz", async () => {
    expect(service.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await request(service.url).get("/healthz")).body).toEqual({ status: "ok" });
    const ready = await request(service.url).get("/readyz");
    expect(ready.status).toBe(200);
    expect(ready.body.status).toBe("ready");
  });

  it("serves its own series and the process's on /metrics", async () => {
    const res = await request(service.url).get("/metrics");
    expect(res.status).toBe(200);
    for (const name of [
      "scim_connector_reconcile_outcomes_total",
      "scim_connector_mirror_parked_changes",
      "scim_connector_budget_used_calls",
      "process_cpu_user_seconds_total",
      "process_resident_memory_bytes",
      "nodejs_eventloop_lag_seconds",
      "nodejs_heap_size_used_bytes",
    ])
      expect(res.text).toMatch(new RegExp(`^# TYPE ${name} `, "m"));
  });

  it("serves nothing else: no SCIM, no admin", async () => {
    expect((await request(service.url).get("/scim/v2/Users")).status).toBe(404);
    expect((await request(service.url).get("/admin")).status).toBe(404);
  });
});
