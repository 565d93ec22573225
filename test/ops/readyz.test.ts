import express from "express";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONNECTION_NAMES, openDatabase } from "../../src/db/dataSource.js";
import type { Database } from "../../src/db/database.js";
import { healthRouter } from "../../src/http/health.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";

/**
 * /readyz answers within its own bound, whatever the database does: a probe that gets no answer
 * (a Kubernetes probe times out after 1 s by default) is worse than a 503. Here the pool's one
 * connection is held by a slow statement, so the check waits for a connection (the pool's 5 s);
 * with a bound of 50 ms the answer is a 503 that says why, long before the pool gives up.
 */
describe("/readyz bounded in time", () => {
  let database: TestDatabase;
  let onePool: Database;

  beforeAll(async () => {
    database = await createTestDatabase();
    onePool = await openDatabase({ url: database.url, poolSize: 1, applicationName: CONNECTION_NAMES.http });
  });
  afterAll(async () => {
    await onePool?.close();
    await database?.drop();
  });

  it("answers 200 when the database answers, and 503 naming the wait when it does not answer in time", async () => {
    const app = express().use(healthRouter(onePool, () => false, undefined, 50));
    expect((await request(app).get("/readyz")).body).toEqual({ status: "ready" });

    const held = onePool.query("SELECT pg_sleep(3)");
    const res = await request(app).get("/readyz");
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ status: "not ready", reason: "the database did not answer within 50 ms" });
    await held;
    expect((await request(app).get("/readyz")).status).toBe(200);
  });
});
