import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONNECTION_NAMES } from "../../src/db/dataSource.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";
import { eventually } from "../support/wait.js";
import type { Command, Report } from "./connectionLossProcess.js";
import { startHoldingProxy, type HoldingProxy } from "./holdingProxy.js";

/**
 * Every kind of connection the connector holds, terminated (pg_terminate_backend: a failover, an
 * operator, a proxy's idle timeout) while it is checked out, in a process with the connector's
 * process policy: an 'error' event no listener hears is an uncaught exception outside any request,
 * and the policy ends the process. After each, the process must still serve. The last case is the
 * one `npm test` met by chance under load (issue 45): a raw statement's client, released as its
 * answer is parsed, is handed at once to a transaction waiting for the pool, and the server's
 * goodbye, in the same read, is emitted before TypeORM's query runner has put its listener on.
 */

const ROOT = path.resolve(import.meta.dirname, "../..");
const POOL_NAME = "scim-connector-test-guarded";
const HANDOVER_MARKER = "/*handover*/";

describe("a database connection terminated while checked out does not stop the process", () => {
  let database: TestDatabase;
  let proxy: HoldingProxy;
  let killer: pg.Client;
  let child: ChildProcess;
  let output = "";
  const reports: Report[] = [];
  let heard: () => void = () => undefined;

  /** The next report satisfying `wanted`; fails with the child's output if it exits first. */
  function next<T extends Report>(wanted: (report: Report) => report is T): Promise<T> {
    return new Promise((resolve, reject) => {
      const look = () => {
        const index = reports.findIndex(wanted);
        if (index >= 0) return resolve(reports.splice(index, 1)[0] as T);
        if (child.exitCode !== null)
          return reject(new Error(`the process exited ${child.exitCode}:\n${output.slice(-3000)}`));
        heard = look;
      };
      look();
    });
  }
  const checkedOut = (r: Report): r is { checkedOut: true } => "checkedOut" in r;
  const outcome = (r: Report): r is { outcome: string[] } => "outcome" in r;
  const served = (r: Report): r is { served: boolean; leaseId: number } => "served" in r;
  const command = (c: Command) => child.send(c);

  async function backend(condition: string): Promise<number> {
    return eventually(`a backend where ${condition}`, async () => {
      const { rows } = await killer.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND ${condition}`,
      );
      return rows.length === 1 ? rows[0]!.pid : undefined;
    });
  }
  async function terminate(pid: number): Promise<void> {
    await killer.query(`SELECT pg_terminate_backend($1)`, [pid]);
    await eventually(`backend ${pid} gone`, async () => {
      const { rows } = await killer.query(`SELECT 1 FROM pg_stat_activity WHERE pid = $1`, [pid]);
      return rows.length === 0;
    });
  }
  async function expectStillServing(): Promise<void> {
    command({ do: "serve" });
    const answer = await next(served);
    expect(answer.served, "a statement on the pool").toBe(true);
    expect(answer.leaseId, "the worker lease is held").toBeGreaterThan(0);
    // The policy exits 200 ms after logging an uncaught exception: its line is the first sign.
    expect(output).not.toMatch(/uncaught exception/);
    expect(child.exitCode, output).toBeNull();
  }

  beforeAll(async () => {
    database = await createTestDatabase();
    proxy = await startHoldingProxy(database.url, HANDOVER_MARKER);
    killer = new pg.Client({ connectionString: database.url, application_name: "scim-connector-test-killer" });
    await killer.connect();
    child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        path.join(ROOT, "test/faults/connectionLossProcess.ts"),
        proxy.url,
        database.url,
        POOL_NAME,
        HANDOVER_MARKER,
      ],
      { cwd: ROOT, env: { ...process.env, LOG_LEVEL: "warn" }, stdio: ["ignore", "pipe", "pipe", "ipc"] },
    );
    child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
    child.on("message", (report: Report) => {
      reports.push(report);
      heard();
    });
    child.on("exit", () => heard());
    await next((r): r is { ready: true } => "ready" in r);
  }, 60_000);
  afterAll(async () => {
    child?.kill("SIGKILL");
    await killer?.end();
    await proxy?.close();
    await database?.drop();
  });

  it("a transaction's connection, idle in the transaction (TypeORM's query runner)", async () => {
    command({ do: "transaction" });
    await next(checkedOut);
    await terminate(await backend(`application_name = '${POOL_NAME}' AND state = 'idle in transaction'`));
    command({ do: "continue" });
    expect((await next(outcome)).outcome[0]).toMatch(/^failed/);
    await expectStillServing();
  });

  it("a raw pooled statement's connection, mid-statement", async () => {
    command({ do: "raw" });
    await next(checkedOut);
    await terminate(await backend(`application_name = '${POOL_NAME}' AND query LIKE 'SELECT pg_sleep(30)%'`));
    expect((await next(outcome)).outcome[0]).toMatch(/^failed 57P01/);
    await expectStillServing();
  });

  it("the worker lease's connection (its advisory lock and LISTEN)", async () => {
    command({ do: "lease" });
    await next(checkedOut);
    await terminate(await backend(`application_name = '${CONNECTION_NAMES.reconcileLease}'`));
    expect((await next(outcome)).outcome).toEqual(["lost"]);
    await expectStillServing();
  });

  it("a raw statement's client handed to a waiting transaction in the same read as the server's goodbye", async () => {
    const held = proxy.arm();
    command({ do: "handover" });
    await next(checkedOut);
    await held;
    await terminate(await backend(`application_name = '${POOL_NAME}'`));
    const [raw, waiting] = (await next(outcome)).outcome;
    // The raw statement had its answer; the transaction got a dead client and failed (its caller retries).
    expect(raw).toBe("ok");
    expect(waiting).toMatch(/^failed/);
    await expectStillServing();
  });
});
