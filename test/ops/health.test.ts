import { Agent, get } from "node:http";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadEnv } from "../../src/config/env.js";
import { startService, type Service } from "../../src/service.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";

describe("health endpoints", () => {
  let database: TestDatabase;
  let service: Service;

  beforeAll(async () => {
    database = await createTestDatabase();
    service = await startService({ env: loadEnv({ PORT: "0", HOST: "127.0.0.1" }), databaseUrl: database.url });
  });
  afterAll(async () => {
    await service?.close();
    await database?.drop();
  });

  it("/healthz answers while the process lives", async () => {
    const res = await request(service.url).get("/healthz");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: "ok" });
  });

  it("/readyz is ready when the database is reachable and migrated", async () => {
    const res = await request(service.url).get("/readyz");
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("ready");
  });

  it("/readyz says whether this replica's mapping file is the one in force", async () => {
    const res = await request(service.url).get("/readyz");
    expect(res.body.mapping).toMatchObject({ planning: "file" });
    expect(res.body.mapping.fileVersion).toBe(res.body.mapping.inForceVersion);
  });

  it("/readyz is not ready when a migration is pending", async () => {
    await service.db.query(`DELETE FROM typeorm_migrations`);
    const res = await request(service.url).get("/readyz");
    expect(res.status).toBe(503);
    expect(res.body.reason).toBe("migrations pending");
  });

  // Last: the service stays draining.
  it("/readyz is not ready while the process drains, and the answers close their connection", async () => {
    service.drain();
    const res = await request(service.url).get("/readyz");
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ status: "not ready", reason: "shutting down" });
    // A keep-alive client is told to open its next request elsewhere.
    const agent = new Agent({ keepAlive: true });
    const connection = await new Promise<string | undefined>((resolve, reject) =>
      get(`${service.url}/healthz`, { agent }, (answer) => {
        answer.resume();
        resolve(answer.headers.connection);
      }).on("error", reject),
    );
    agent.destroy();
    expect(connection).toBe("close");
    expect((await request(service.url).get("/healthz")).status).toBe(200);
  });
});
