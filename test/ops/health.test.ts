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

  it("/readyz is not ready when a migration is pending", async () => {
    await service.db.query(`DELETE FROM typeorm_migrations`);
    const res = await request(service.url).get("/readyz");
    expect(res.status).toBe(503);
    expect(res.body.reason).toBe("migrations pending");
  });
});
