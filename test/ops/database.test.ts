import Transport from "winston-transport";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Database } from "../../src/db/database.js";
import { openDatabase } from "../../src/db/dataSource.js";
import { isTransientDatabaseError } from "../../src/errors.js";
import { resetLogger, setLogLevel, setLogTransport, withLogContext } from "../../src/logging/logger.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";

/** The facade over TypeORM (src/db/database.ts): the shapes callers rely on, and a pool that says when it loses a connection. */

class CaptureTransport extends Transport {
  readonly records: Record<string, unknown>[] = [];
  override log(info: Record<string, unknown>, callback: () => void): void {
    this.records.push(info);
    callback();
  }
}

const PROBE_POOL = "scim-connector-test:facade-probe";

describe("Database", () => {
  let t: TestDatabase;
  let single: Database;
  const capture = new CaptureTransport();

  beforeAll(async () => {
    setLogTransport(capture);
    setLogLevel("warn");
    t = await createTestDatabase();
    single = await openDatabase({ url: t.url, poolSize: 1, applicationName: PROBE_POOL });
    await t.db.query(`CREATE TABLE facade_probe (id int PRIMARY KEY, v text NOT NULL)`);
  });

  afterAll(async () => {
    resetLogger();
    await single?.close();
    await t?.drop();
  });

  it("query returns the rows of every statement, UPDATE and DELETE included", async () => {
    expect(await t.db.query(`INSERT INTO facade_probe VALUES (1, 'a'), (2, 'b'), (3, 'c') RETURNING id`)).toEqual([
      { id: 1 },
      { id: 2 },
      { id: 3 },
    ]);
    expect(await t.db.query(`UPDATE facade_probe SET v = v || '!' WHERE id <= 2 RETURNING id, v`)).toEqual([
      { id: 1, v: "a!" },
      { id: 2, v: "b!" },
    ]);
    expect(await t.db.query(`DELETE FROM facade_probe WHERE id = 3 RETURNING v`)).toEqual([{ v: "c" }]);
    expect(await t.db.query(`UPDATE facade_probe SET v = v WHERE id = 1`)).toEqual([]);
  });

  it("execute returns how many rows the statement touched", async () => {
    expect(await t.db.execute(`UPDATE facade_probe SET v = upper(v)`)).toBe(2);
    expect(await t.db.execute(`DELETE FROM facade_probe WHERE id = 99`)).toBe(0);
    expect(await t.db.execute(`INSERT INTO facade_probe VALUES (4, 'd'), (5, 'e')`)).toBe(2);
  });

  it("a transaction sees its own writes and leaves nothing behind when it throws", async () => {
    const failed = t.db.transaction(async (tx) => {
      await tx.execute(`INSERT INTO facade_probe VALUES (6, 'f')`);
      expect(await tx.query(`SELECT v FROM facade_probe WHERE id = 6`)).toEqual([{ v: "f" }]);
      throw new Error("roll back");
    });
    await expect(failed).rejects.toThrow("roll back");
    expect(await t.db.query(`SELECT id FROM facade_probe WHERE id = 6`)).toEqual([]);
  });

  it("prepared runs a named prepared statement", async () => {
    expect(await single.prepared("facade_probe_by_id", `SELECT v FROM facade_probe WHERE id = $1`, [4])).toEqual([
      { v: "d" },
    ]);
    expect(await single.prepared("facade_probe_by_id", `SELECT v FROM facade_probe WHERE id = $1`, [5])).toEqual([
      { v: "e" },
    ]);
    // One connection in this pool, so the statement is visible from the same session.
    expect(await single.query(`SELECT name FROM pg_prepared_statements WHERE name = 'facade_probe_by_id'`)).toEqual([
      { name: "facade_probe_by_id" },
    ]);
  });

  it("prepared keeps its connection after a failed statement and replaces one the server killed mid-statement", async () => {
    const pid = async () =>
      (await single.prepared<{ pid: number }>("facade_probe_pid", `SELECT pg_backend_pid() AS pid`, []))[0]!.pid;
    const first = await pid();
    await expect(single.prepared("facade_probe_div", `SELECT 1/0`, [])).rejects.toMatchObject({ code: "22012" });
    expect(await pid()).toBe(first);

    const killed = single.prepared("facade_probe_sleep", `SELECT pg_sleep(30)`, []).then(
      () => expect.fail("the statement was not killed"),
      // The next statement is asked for at once, before the closed socket is read: only a pool
      // told that the connection is broken opens a new one for it.
      (error: unknown) => ({ error, next: pid() }),
    );
    await vi.waitFor(async () =>
      expect(
        await t.db.query(`SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND query LIKE '%pg_sleep%'`, [first]),
      ).toHaveLength(1),
    );
    await t.db.query(`SELECT pg_terminate_backend($1)`, [first]);
    const { error, next } = await killed;
    expect(isTransientDatabaseError(error)).toBe(true);
    expect(await next).not.toBe(first);
  });

  it("logs a pooled connection the server dropped, with the pool's name, and carries on", async () => {
    await single.query(`SELECT 1`); // an idle connection now waits in the pool
    const [{ n }] = await t.db.query<{ n: number }>(
      `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = $1`,
      [PROBE_POOL],
    );
    expect(n).toBe(1);
    await vi.waitFor(() =>
      expect(capture.records.find((r) => r.message === "idle pool connection lost")).toMatchObject({
        level: "warn",
        category: "db",
        applicationName: PROBE_POOL,
      }),
    );
    expect(await single.query(`SELECT 1 AS ok`)).toEqual([{ ok: 1 }]);
  });

  it("logs a dropped connection without the id of the request that happened to open it", async () => {
    const name = `${PROBE_POOL}:opened-by-a-request`;
    // Opened while serving a request: the pooled connection's socket keeps that request's async context.
    const opened = await withLogContext({ requestId: "request-that-opened-it" }, async () => {
      const db = await openDatabase({ url: t.url, poolSize: 1, applicationName: name });
      await db.query(`SELECT 1`);
      return db;
    });
    try {
      await t.db.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1`, [name]);
      const lost = () =>
        capture.records.find((r) => r.message === "idle pool connection lost" && r.applicationName === name);
      await vi.waitFor(() => expect(lost()).toBeDefined());
      expect(lost()).not.toHaveProperty("requestId");
    } finally {
      await opened.close();
    }
  });
});
