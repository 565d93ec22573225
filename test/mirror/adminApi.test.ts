import express, { type NextFunction, type Request, type Response } from "express";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/clock.js";
import { claimPendingChanges, recordPushes, settleClaimedChanges } from "../../src/db/mirror/syncRepository.js";
import { AppError } from "../../src/errors.js";
import { mirrorAdminRouter } from "../../src/http/admin/api/mirror.js";
import { createMirrorAdmin } from "../../src/admin/mirror.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";
import { upsertEmailStates } from "../support/mirror.js";

let t: TestDatabase;
const clock = new ManualClock();
let app: express.Express;

beforeAll(async () => {
  t = await createTestDatabase();
  app = express();
  app.use(express.json());
  app.use(mirrorAdminRouter(createMirrorAdmin({ db: t.db, clock })));
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    res.status(error instanceof AppError ? error.status : 500).json({ message: (error as Error).message });
  });
});
afterAll(async () => {
  await t?.drop();
});

describe("GET /admin/api/mirror and friends", () => {
  it("reports pending per table, the oldest change's age, parked rows with reasons and the last push", async () => {
    await upsertEmailStates(t.db, [
      ["a@example.com", "subscribed"],
      ["b@example.com", "subscribed"],
      ["c@example.com", "opted_in"],
    ]);
    const claimId = crypto.randomUUID();
    const [first] = await claimPendingChanges(t.db, {
      kind: "email",
      claimId,
      limit: 1,
      now: clock.now(),
      leaseMs: 60_000,
    });
    await settleClaimedChanges(
      t.db,
      "email",
      claimId,
      [{ key: first.key, version: first.version, outcome: "park", reason: "platform refused (HTTP 400): nope" }],
      clock.now(),
    );
    await recordPushes(
      t.db,
      [{ kind: "email", endpoint: "POST /email/status", changes: 2, outcome: "ok", status: 200 }],
      clock.now(),
    );
    clock.advance(90_000);

    const res = await request(app).get("/mirror").expect(200);
    const email = res.body.tables.find((x: { kind: string }) => x.kind === "email");
    expect(email).toMatchObject({ table: "mirror.email_subscription_states", pending: 2, parked: 1, inFlight: 0 });
    expect(email.oldestPendingSeconds).toBeGreaterThanOrEqual(89);
    expect(email.lastPush).toMatchObject({ endpoint: "POST /email/status", changes: 2, outcome: "ok", status: 200 });
    expect(res.body.tables.map((x: { kind: string }) => x.kind)).toEqual([
      "email",
      "subscription_group",
      "preference_center",
    ]);
    expect(res.body.parked).toEqual([
      expect.objectContaining({ kind: "email", key: first.key, reason: "platform refused (HTTP 400): nope" }),
    ]);
    expect(res.body.lastPush).toMatchObject({ kind: "email", changes: 2 });

    const logPage = await request(app).get("/mirror/log?limit=10").expect(200);
    expect(logPage.body.entries).toHaveLength(1);
    await request(app).get("/mirror/log?limit=0").expect(400);

    expect((await request(app).get("/mirror/parked?kind=email").expect(200)).body.parked).toHaveLength(1);
    await request(app).post("/mirror/parked/requeue").send({ kind: "nonsense" }).expect(400);
    expect((await request(app).post("/mirror/parked/requeue").send({ kind: "email" }).expect(200)).body).toEqual({
      requeued: 1,
    });
    const after = await request(app).get("/mirror").expect(200);
    expect(after.body.parked).toEqual([]);
    expect(after.body.tables[0].pending).toBe(3);
  });
});
