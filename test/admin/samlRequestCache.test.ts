import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/clock.js";
import { AdminSessionRepository } from "../../src/db/auth/adminSessionRepository.js";
import { PgSamlRequestCache } from "../../src/http/admin/auth/samlRequestCache.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";

/**
 * node-saml's InResponseTo cache in PostgreSQL. Under the TypeORM result shapes, `forgetAuthnRequest`
 * counted the `[rows, count]` pair and so always said it had forgotten something: these pin what
 * each answer means, on a real database.
 */
describe("PgSamlRequestCache", () => {
  let t: TestDatabase;
  let cache: PgSamlRequestCache;
  const clock = new ManualClock();
  const TTL_MS = 10 * 60_000;

  beforeAll(async () => {
    t = await createTestDatabase();
    cache = new PgSamlRequestCache(new AdminSessionRepository(t.db), clock, TTL_MS);
  });

  afterAll(async () => {
    await t?.drop();
  });

  it("a request id is found until it is removed, and removed once: a second removal says there was nothing", async () => {
    await cache.saveAsync("_request-1", "sent");
    expect(await cache.getAsync("_request-1")).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(await cache.removeAsync("_request-1")).toBe("_request-1");
    expect(await cache.getAsync("_request-1")).toBeNull();
    expect(await cache.removeAsync("_request-1")).toBeNull();
  });

  it("an id never sent is neither found nor removed", async () => {
    expect(await cache.getAsync("_never-sent")).toBeNull();
    expect(await cache.removeAsync("_never-sent")).toBeNull();
  });

  it("a request older than its time to live counts as absent", async () => {
    await cache.saveAsync("_request-2", "sent");
    clock.advance(TTL_MS + 1_000);
    expect(await cache.getAsync("_request-2")).toBeNull();
  });
});
