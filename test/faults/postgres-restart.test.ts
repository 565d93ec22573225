import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import type { Database } from "../../src/db/database.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/dataSource.js";
import { freePort, startEmbeddedPostgres, type EmbeddedDatabase } from "../../src/db/embedded.js";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.js";
import { spawnConnector, type ConnectorProcess } from "../support/connectorProcess.js";
import { addFault, clearFaults, emulatorCounts, ledgerDebits } from "../support/emulator.js";
import { EtlWriter, IdpModel, ResilientIdp, waitForQuiet, worldProblems } from "../support/faultWorld.js";
import { ADMIN_TOKEN, IDP_TOKEN, TEST_MAPPING } from "../support/stack.js";
import { eventually } from "../support/wait.js";
import { TEST_CONNECTION_NAME } from "../support/db.js";

/**
 * PostgreSQL stopped under a running connector (a child process) in the middle of reconciles and
 * mirror pushes, then started again on the same data directory and port. While it is down
 * /readyz says 503 and /healthz 200; afterwards the same process carries on by itself and nothing
 * is lost or doubled.
 */

const BUDGET = 500;
const isRoot = typeof process.getuid === "function" && process.getuid() === 0;

describe("PostgreSQL restarted under a running connector", () => {
  let dir: string;
  let port: number;
  let pg: EmbeddedDatabase | undefined;
  let db: Database;
  let emulator: RunningEmulator;
  let connector: ConnectorProcess;
  let idp: ResilientIdp;
  let etl: EtlWriter;
  const model = new IdpModel();
  const name = (i: number) => `pg${String(i).padStart(2, "0")}@example.com`;
  const emails = Array.from({ length: 200 }, (_, i) => `pgetl${i}@example.com`);
  const startPostgres = () =>
    startEmbeddedPostgres(path.join(dir, "data"), { persistent: true, throwaway: true, port });

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "scim-connector-pgrestart-"));
    if (isRoot) await chmod(dir, 0o755); // the server runs as 'postgres' and must enter the folder
    port = await freePort();
    pg = await startPostgres();
    emulator = await startEmulator();
    const mappingFile = path.join(dir, "mapping.yaml");
    await writeFile(mappingFile, TEST_MAPPING);
    connector = await spawnConnector({
      DATABASE_URL: pg.url,
      PLATFORM_URL: emulator.url,
      PLATFORM_SCIM_TOKEN: "dev-scim-token",
      PLATFORM_API_KEY: "dev-api-key",
      PLATFORM_REQUEST_ORIGIN: "x",
      PLATFORM_SCIM_DAILY_BUDGET: String(BUDGET),
      SCIM_TOKEN: IDP_TOKEN,
      ADMIN_TOKEN,
      MAPPING_FILE: mappingFile,
      RECONCILE_WORKERS: "3",
      RECONCILE_POLL_MS: "100",
      QUARANTINE_COOLING_SECONDS: "1",
    });
    db = await openDatabase({ url: pg.url, poolSize: 3, applicationName: TEST_CONNECTION_NAME });
    idp = new ResilientIdp(() => connector.url, IDP_TOKEN);
    etl = new EtlWriter(db, emails);
  });
  afterAll(async () => {
    await etl?.stop();
    await connector?.kill("SIGKILL");
    await emulator?.close();
    if (db?.isOpen) await db.close().catch(() => undefined);
    await pg?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function createInGroup(from: number, to: number, group: string): Promise<void> {
    const ids: string[] = [];
    for (let i = from; i < to; i++) {
      const id = await idp.createUser(name(i));
      model.users.set(name(i), { id, active: true, groups: new Set([group]) });
      ids.push(id);
    }
    await idp.addMembers(model.groupIds.get(group)!, ids);
  }
  /**
   * A probe's status, once, on a connection of its own (0: no answer). A fresh connection per probe
   * leaves no kept-alive socket to be reset between two probes, so a transport error is the
   * service's and counts: it is not tried again.
   */
  const status = (p: string): Promise<number> =>
    new Promise((resolve) => {
      const probe = http.get(`${connector.url}${p}`, { agent: false, timeout: 5_000 }, (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
        res.on("error", () => resolve(0));
      });
      probe.on("timeout", () => probe.destroy());
      probe.on("error", () => resolve(0));
    });

  it("says not ready while PostgreSQL is down, reconnects by itself, and loses or doubles nothing", async () => {
    for (const g of ["Marketing", "Analysts-EU"]) model.groupIds.set(g, await idp.createGroup(g, []));
    // Every platform call takes a while, so the stop lands with reconciles and pushes in flight.
    await addFault(emulator.url, { path: "/scim/v2/Users", delayMs: 200, status: null });
    await addFault(emulator.url, { path: "/email/status", delayMs: 200, status: null });
    await etl.writeOnce(emails);
    await createInGroup(0, 30, "Marketing");
    etl.start(100);
    await eventually(
      "reconciles in flight",
      async () =>
        (
          (await db.query(`SELECT count(*)::int AS n FROM reconcile_queue WHERE claimed_by IS NOT NULL`)) as {
            n: number;
          }[]
        )[0]!.n > 0,
      {
        intervalMs: 20,
      },
    );
    const [{ queued }] = await db.query(`SELECT count(*)::int AS queued FROM reconcile_queue`);
    const [{ pending }] = await db.query(`SELECT count(*)::int AS pending FROM mirror_sync.pending`);
    expect(queued, "reconciles still to do when PostgreSQL stops").toBeGreaterThan(0);

    await pg!.stop();
    pg = undefined;
    const downAt = Date.now();
    // The IdP keeps pushing meanwhile: it is answered 503 and sends again, as Okta and Entra do.
    const pushedWhileDown = (async () => {
      for (const i of [0, 1, 2]) {
        await idp.setActive(model.users.get(name(i))!.id, false);
        model.users.get(name(i))!.active = false;
      }
    })();
    const readyz: number[] = [];
    const healthz: number[] = [];
    while (Date.now() - downAt < 3_000) {
      readyz.push(await status("/readyz"));
      healthz.push(await status("/healthz"));
      await delay(250);
    }
    expect(new Set(readyz), "/readyz while PostgreSQL is down").toEqual(new Set([503]));
    expect(new Set(healthz), "/healthz while PostgreSQL is down").toEqual(new Set([200]));
    expect(connector.child.exitCode, connector.output().slice(-2000)).toBeNull();

    pg = await startPostgres();
    const upAt = Date.now();
    await eventually("/readyz 200 after PostgreSQL came back", async () => (await status("/readyz")) === 200).catch(
      () => {
        throw new Error(`not ready 30 s after PostgreSQL came back:\n${connector.output().slice(-2000)}`);
      },
    );
    const readyAfterMs = Date.now() - upAt;
    expect(connector.child.exitCode, "the same process carries on").toBeNull();

    await pushedWhileDown;
    await createInGroup(30, 35, "Marketing");
    await idp.addMembers(
      model.groupIds.get("Analysts-EU")!,
      [5, 6, 7].map((i) => model.users.get(name(i))!.id),
    );
    for (const i of [5, 6, 7]) model.users.get(name(i))!.groups.add("Analysts-EU");
    await etl.stop();
    await clearFaults(emulator.url);
    await etl.writeOnce(emails.slice(0, 40));

    await waitForQuiet(db, 90_000);
    const found = await worldProblems({ emulatorUrl: emulator.url, db, budget: BUDGET, expected: model.expected() });
    const counts = await emulatorCounts(emulator.url);
    const posts = counts.requests["POST /scim/v2/Users"] ?? 0;
    console.info(
      `postgres restart: stopped with ${queued} reconcile rows and ${pending} mirror changes pending; down ${Math.round((upAt - downAt) / 100) / 10} s ` +
        `(${readyz.length} /readyz checks all 503, /healthz 200), ready ${readyAfterMs} ms after PostgreSQL came back, same pid ${connector.child.pid}; ` +
        `${idp.resent} IdP requests re-sent; ${etl.writes} ETL row writes (${etl.failures} refused while down); ${posts} POSTs for ${model.users.size} users, ` +
        `${counts.scimDaily.used} SCIM calls, ${await ledgerDebits(db)} debits; lost or doubled: ${found.length ? found.join("; ") : "nothing"}`,
    );
    expect(found).toEqual([]);
    // Nothing doubled: never more than one create per user (an unanswered one is resolved by lookup).
    expect(posts).toBeLessThanOrEqual(model.users.size);
  }, 180_000);
});
