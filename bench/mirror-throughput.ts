/**
 * Mirror-sync throughput, end to end: a simulated ETL upserts 200,000 subscription-group changes
 * into `mirror.subscription_group_states` (batches of 2,000 rows per transaction) while the
 * mirror sync worker runs, against an in-process emulator and PostgreSQL (embedded unless
 * DATABASE_URL is set). Prints changes per second from the ETL's first write to the last
 * acknowledgement, and requests per change against the minimum for the same changes. Delivery is
 * checked against the emulator: every (group, identifier) written must hold its latest state there
 * (`delivered N of N`); parked changes are counted apart, and with no fault injected any parked
 * change fails the run. Targets: the minimum number of requests, and at least 5,000 changes/s on
 * a 2-core machine.
 *
 *   npm run bench:mirror [-- --changes 200000 --groups 20 --batch 2000 --etl-first]
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { openDatabase } from "../src/db/dataSource.js";
import { startEmbeddedPostgres } from "../src/db/embedded.js";
import { startEmulator, type RunningEmulator } from "../src/emulator/index.js";
import { reportedState } from "../src/emulator/engagement/subscriptions.js";
import { MAX_ENTRIES_PER_SUBSCRIPTION_REQUEST, minimumRequests, type PendingChange } from "../src/mirror/batching.js";
import { MirrorSyncWorker } from "../src/mirror/worker.js";
import { HttpTransport } from "../src/platform/transport.js";
import { PlatformRestClient } from "../src/platform/rest.js";

const TARGET_PER_SECOND = 5_000;
const { values } = parseArgs({
  options: {
    changes: { type: "string", default: "200000" },
    groups: { type: "string", default: "20" },
    batch: { type: "string", default: "2000" },
    "etl-first": { type: "boolean", default: false },
  },
});
const total = Number(values.changes);
const groups = Number(values.groups);
const batchSize = Number(values.batch);

type Row = { group: string; type: "email" | "phone" | "external_id"; id: string; state: "subscribed" | "unsubscribed" };

/** Deterministic changes: each (group, identifier) once, ~60% emails, 25% external ids, 15% phones. */
function simulatedChanges(): Row[] {
  const rows: Row[] = [];
  let seed = 42;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  for (let i = 0; i < total; i++) {
    const r = random();
    const type = r < 0.6 ? "email" : r < 0.85 ? "external_id" : "phone";
    const id =
      type === "email"
        ? `user${i}@example.com`
        : type === "phone"
          ? `+1415${String(1_000_000 + i).padStart(7, "0")}`
          : `ext-${i}`;
    rows.push({ group: `group-${i % groups}`, type, id, state: random() < 0.7 ? "subscribed" : "unsubscribed" });
  }
  return rows;
}

async function database(): Promise<{ url: string; stop(): Promise<void> }> {
  if (process.env.DATABASE_URL) return { url: process.env.DATABASE_URL, stop: async () => undefined };
  const dir = await mkdtemp(path.join(os.tmpdir(), "mirror-bench-pg-"));
  await import("node:fs/promises").then((fs) => fs.chmod(dir, 0o755));
  const embedded = await startEmbeddedPostgres(path.join(dir, "data"), { persistent: false, database: "postgres" });
  const admin = new pg.Client({ connectionString: embedded.url });
  await admin.connect();
  await admin.query(`CREATE DATABASE mirror_bench`);
  await admin.end();
  const url = new URL(embedded.url);
  url.pathname = "/mirror_bench";
  return {
    url: url.toString(),
    stop: async () => {
      await embedded.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Written (group, identifier) pairs whose latest state the emulator does not hold, read as GET /subscription/status/get reports it. */
function undelivered(emulator: RunningEmulator, rows: Row[]): string[] {
  const latest = new Map<string, Row>();
  for (const r of rows) latest.set(`${r.group}|${r.type}|${r.id}`, r);
  const profiles = emulator.state.profiles;
  const wrong: string[] = [];
  for (const r of latest.values()) {
    const profile =
      r.type === "email"
        ? profiles.pickByEmail(r.id)
        : r.type === "phone"
          ? profiles.pickByPhone(r.id)
          : profiles.byExternal(r.id);
    const expected = r.state === "subscribed" ? "Subscribed" : "Unsubscribed";
    if (reportedState(profile, r.group) !== expected)
      wrong.push(`${r.group} ${r.type} ${r.id}: ${reportedState(profile, r.group)}, wrote ${expected}`);
  }
  return wrong;
}

async function etl(client: pg.Client, rows: Row[]): Promise<void> {
  for (let i = 0; i < rows.length; i += batchSize) {
    const slice = rows.slice(i, i + batchSize);
    const column = (type: Row["type"]) => slice.map((r) => (r.type === type ? r.id : null));
    await client.query(
      `INSERT INTO mirror.subscription_group_states (subscription_group_id, external_id, email, phone, subscription_state)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])
       ON CONFLICT (subscription_group_id, external_id, email, phone)
       DO UPDATE SET subscription_state = EXCLUDED.subscription_state, updated_at = now()`,
      [slice.map((r) => r.group), column("external_id"), column("email"), column("phone"), slice.map((r) => r.state)],
    );
  }
}

async function main(): Promise<void> {
  const rows = simulatedChanges();
  const pgServer = await database();
  const db = await openDatabase({ url: pgServer.url, poolSize: 10, applicationName: "scim-connector-bench" });
  await db.migrate();
  const emulator = await startEmulator({ port: 0 });
  // The platform sets subscription states only on profiles it has: one per identifier, as the
  // customer's users would already exist there.
  for (const r of rows) {
    if (r.type === "email") emulator.state.profiles.create({ email: r.id });
    else if (r.type === "phone") emulator.state.profiles.create({ phone: r.id });
    else emulator.state.profiles.create({ externalId: r.id });
  }
  const worker = new MirrorSyncWorker({
    db,
    rest: new PlatformRestClient(new HttpTransport({ baseUrl: emulator.url })),
    apiKeys: { default: "dev-api-key" },
    pollIntervalMs: 20,
  });
  const etlClient = new pg.Client({ connectionString: pgServer.url });
  await etlClient.connect();
  try {
    const started = performance.now();
    let etlDone = 0;
    if (values["etl-first"]) {
      await etl(etlClient, rows);
      etlDone = performance.now();
      worker.start();
    } else {
      worker.start();
      await etl(etlClient, rows);
      etlDone = performance.now();
    }
    for (;;) {
      const [{ n }]: { n: number }[] = await db.query(
        `SELECT count(*)::int AS n FROM mirror_sync.pending WHERE parked_at IS NULL`,
      );
      if (n === 0) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const finished = performance.now();
    await worker.stop();

    const stats = emulator.state.stats().requests;
    const requests = stats["POST /v2/subscription/status/set"] ?? 0;
    const asChanges: PendingChange<null>[] = rows.map((r, i) => ({
      key: String(i),
      batchKey: `${r.group}|${r.state}|${r.type}`,
      version: "0",
      payload: null,
    }));
    const minimum = minimumRequests(asChanges, MAX_ENTRIES_PER_SUBSCRIPTION_REQUEST);
    const [{ parked, left }]: { parked: number; left: number }[] = await db.query(
      `SELECT count(*) FILTER (WHERE parked_at IS NOT NULL)::int AS parked, count(*) FILTER (WHERE parked_at IS NULL)::int AS left FROM mirror_sync.pending`,
    );
    const wrong = undelivered(emulator, rows);
    const written = new Set(rows.map((r) => `${r.group}|${r.type}|${r.id}`)).size;
    const sizes: { changes: number }[] = await db.query(
      `SELECT changes FROM mirror_sync.push_log WHERE outcome = 'ok' ORDER BY id`,
    );
    const seconds = (finished - started) / 1000;
    const perSecond = Math.round(total / seconds);
    const lines = [
      `mirror sync: ${total.toLocaleString("en")} subscription changes, ${groups} groups, ETL batches of ${batchSize}${values["etl-first"] ? " (ETL first, then sync)" : " (ETL and sync concurrently)"}`,
      `  ETL writes done      ${((etlDone - started) / 1000).toFixed(2)} s`,
      `  all pushed           ${seconds.toFixed(2)} s  →  ${perSecond.toLocaleString("en")} changes/s (target ≥ ${TARGET_PER_SECOND.toLocaleString("en")})  ${perSecond >= TARGET_PER_SECOND ? "OK" : "BELOW TARGET"}`,
      `  requests             ${requests} (minimum ${minimum}; ${(requests / minimum).toFixed(3)}× the minimum)`,
      `  requests per change  ${(requests / total).toFixed(5)} (minimum ${(minimum / total).toFixed(5)})`,
      `  delivered            ${written - wrong.length} of ${written} (checked against the emulator)${wrong.length ? `; missing or stale: ${wrong.slice(0, 5).join("; ")}` : ""}`,
      `  parked               ${parked} (no fault injected: any parked change fails the run); left pending ${left}`,
      `  changes per request  ${sizes.map((r) => r.changes).join(" ")}`,
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
    if (wrong.length || parked > 0 || left > 0) process.exitCode = 1;
  } finally {
    await etlClient.end();
    await emulator.close();
    await db.close();
    await pgServer.stop();
  }
}

await main();
