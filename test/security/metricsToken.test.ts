import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnConnector, type ConnectorProcess } from "../support/connectorProcess.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";
import { ADMIN_TOKEN, IDP_TOKEN, writeMappingFile } from "../support/stack.js";

/**
 * Without METRICS_TOKEN, /metrics answers a loopback caller that carries no forwarding header; a
 * forwarder on the host that adds none (socat, `ssh -L`, nginx `stream {}`) would pass that on to
 * anyone. So a service that listens beyond loopback must have the token: `start` as a real child
 * process stops at boot with exit 78 naming METRICS_TOKEN, and with the token it serves /metrics
 * to the token only, loopback or not.
 */

const METRICS_TOKEN = "metrics-token-0123456789abcdef";

describe("METRICS_TOKEN whenever the service listens beyond loopback", () => {
  let database: TestDatabase;
  let mappingFile: string;
  const started: ConnectorProcess[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    mappingFile = await writeMappingFile();
  }, 90_000);
  afterAll(async () => {
    for (const c of started) await c.kill("SIGKILL");
    await database?.drop();
  });

  const env = (extra: Record<string, string>) => ({
    DATABASE_URL: database.url,
    SCIM_TOKEN: IDP_TOKEN,
    ADMIN_TOKEN,
    ADMIN_ALLOW_REMOTE: "true",
    MAPPING_FILE: mappingFile,
    RECONCILE_WORKERS: "0",
    RESYNC_CRON: "off",
    ...extra,
  });

  it(
    "HOST=0.0.0.0 without METRICS_TOKEN: the boot stops with exit 78 and says how to fix it",
    { timeout: 90_000 },
    async () => {
      await expect(spawnConnector(env({ HOST: "0.0.0.0" }))).rejects.toThrow(
        /exited 78[\s\S]*METRICS_TOKEN: required when the service listens beyond loopback \(HOST=0\.0\.0\.0\)/,
      );
    },
  );

  it(
    "HOST=0.0.0.0 with METRICS_TOKEN: /metrics answers the token, and no longer a bare loopback caller",
    { timeout: 90_000 },
    async () => {
      const c = await spawnConnector(env({ HOST: "0.0.0.0", METRICS_TOKEN }));
      started.push(c);
      expect((await fetch(`${c.url}/metrics`)).status).toBe(401);
      const scraped = await fetch(`${c.url}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
      expect(scraped.status).toBe(200);
      expect(await scraped.text()).toMatch(/^# HELP /m);
    },
  );

  it(
    "HOST=127.0.0.1 without METRICS_TOKEN still starts: only this machine can reach it",
    { timeout: 90_000 },
    async () => {
      const c = await spawnConnector(env({ HOST: "127.0.0.1" }));
      started.push(c);
      expect((await fetch(`${c.url}/metrics`)).status).toBe(200);
    },
  );
});
