// `npm run bench:drain -- [built app dir] [runs]`: a rolling deploy's stop under load (issue 45;
// docs/operations.md, "Stopping and upgrading"), counted on the real peer only. Per run: a fresh
// database on one embedded PostgreSQL, `node dist/main.js` of the app dir (default: this tree, after
// `npm run build`; another build as bench:footprint takes it) with SHUTDOWN_DELAY_MS=2000, 16
// keep-alive writers POSTing users as fast as they can (the draining answers say `Connection:
// close`, so their next request opens a new connection), SIGTERM after 3 s, each writer stopping at
// its first ECONNREFUSED. Counted: every request's outcome and send time from the writers
// themselves; the instant the listener was closed from a preload in the service
// (bench/support/listenerCloseProbe.mjs: the service logs no line then); every acknowledged 201
// looked up by SQL in idp_users. Never the service's own counters.
//
// One line per run and a summary. Exit 1 when an acknowledged write is missing or the service did
// not exit 0. An ECONNRESET is reported, with when it was sent relative to the close, but is not a
// failure: a connection the kernel completes at the very instant the listening socket closes is
// reset, and no close avoids that race (in a deploy the delay lets the load balancer stop sending
// first). The previous drain (at most 20 connections taken from the backlog) reset some in most
// runs, sent up to ~30 ms before the close; on a loaded machine the race shows on the current one
// too, as a few sent within a few ms of it. Bad arguments exit 2; a run that cannot be done (the
// service does not start) throws, after the cleanup.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { Agent, request } from "node:http";
import os from "node:os";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import pg from "pg";
import { type EmbeddedDatabase, freePort, startEmbeddedPostgres } from "../src/db/embedded.js";
import { type RunningEmulator, startEmulator } from "../src/emulator/index.js";

const app = path.resolve(process.argv[2] ?? "dist/..");
const runs = Number(process.argv[3] ?? 7);
if (!Number.isInteger(runs) || runs < 1) {
  console.error("bench:drain: runs must be a whole number, at least 1 (npm run bench:drain -- [app dir] [runs])");
  process.exit(2);
}
if (!existsSync(path.join(app, "dist/main.js"))) {
  console.error(`bench:drain: no ${path.join(app, "dist/main.js")}: run \`npm run build\` there first`);
  process.exit(2);
}
const WRITERS = 16;
const LOAD_BEFORE_SIGTERM_MS = 3_000;
const SHUTDOWN_DELAY_MS = 2_000;
const SHUTDOWN_TIMEOUT_MS = 20_000;
const TOKEN = "drain-bench-idp-token-0123456789abcdef";
const PROBE = pathToFileURL(path.join(import.meta.dirname, "support/listenerCloseProbe.mjs")).href;

type Sent = { userName: string; sentAt: number; status?: number; id?: string; error?: string };
type Run = {
  sent: number;
  answered: number;
  resetsSentMs: number[];
  refused: number;
  other: number;
  acknowledged: number;
  missing: number;
  exit: number | string;
  closeAfterSigtermMs: number;
};

function post(agent: Agent, url: string, userName: string): Promise<Sent> {
  const sent: Sent = { userName, sentAt: Date.now() };
  return new Promise((resolve) => {
    const failed = (e: NodeJS.ErrnoException) => {
      sent.error ??= e.code ?? e.message;
      resolve(sent);
    };
    const req = request(
      `${url}/scim/v2/Users`,
      {
        method: "POST",
        agent,
        timeout: 30_000,
        headers: { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/scim+json" },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (body += chunk));
        res.on("error", failed);
        res.on("end", () => {
          sent.status = res.statusCode;
          try {
            sent.id = (JSON.parse(body) as { id?: string }).id;
          } catch {
            sent.error = "answer cut";
          }
          resolve(sent);
        });
      },
    );
    req.on("timeout", () => req.destroy(Object.assign(new Error("timeout"), { code: "TIMEOUT" })));
    req.on("error", failed);
    req.end(
      JSON.stringify({
        schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
        userName,
        name: { givenName: "Rolling", familyName: "Deploy" },
        active: true,
      }),
    );
  });
}

async function untilReady(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (
    !(await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (child.exitCode !== null) throw new Error(`the service exited ${child.exitCode} at start:\n${output()}`);
    if (Date.now() > deadline) throw new Error(`the service was not ready within 60 s:\n${output()}`);
    await delay(100);
  }
}

async function adminQuery(serverUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Of the writes answered 201, those not in idp_users under their userName. */
async function missingWrites(databaseUrl: string, acknowledged: Sent[]): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string; user_name: string }>(
      "SELECT id, user_name FROM idp_users WHERE id = ANY($1::uuid[])",
      [acknowledged.map((s) => s.id)],
    );
    const stored = new Map(rows.map((r) => [r.id, r.user_name]));
    return acknowledged.filter((s) => stored.get(s.id!) !== s.userName).length;
  } finally {
    await client.end();
  }
}

let child: ChildProcess | undefined;

async function run(n: number, postgres: EmbeddedDatabase, emulator: RunningEmulator): Promise<Run> {
  const database = `bench_drain_${n}`;
  await adminQuery(postgres.url, `DROP DATABASE IF EXISTS ${database}`);
  await adminQuery(postgres.url, `CREATE DATABASE ${database}`);
  const databaseUrl = Object.assign(new URL(postgres.url), { pathname: `/${database}` }).toString();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const service = spawn(process.execPath, ["dist/main.js"], {
    cwd: app,
    env: {
      PATH: process.env.PATH,
      NODE_OPTIONS: `--import ${PROBE}`,
      HOST: "127.0.0.1",
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      PLATFORM_URL: emulator.url,
      PLATFORM_SCIM_TOKEN: "dev-scim-token",
      PLATFORM_REQUEST_ORIGIN: "bench-drain",
      SCIM_TOKEN: TOKEN,
      ADMIN_TOKEN: "drain-bench-admin-token-0123456789abcdef",
      LOG_LEVEL: "warn",
      RESYNC_CRON: "off",
      RECONCILE_SETTLE_MS: "0",
      SHUTDOWN_DELAY_MS: String(SHUTDOWN_DELAY_MS),
      SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child = service;
  let output = "";
  service.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  service.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | string>((resolve) =>
    service.once("exit", (code, signal) => resolve(code ?? signal ?? "?")),
  );
  await untilReady(url, service, () => output);

  const sent: Sent[] = [];
  const writer = async (w: number) => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const stopAt = Date.now() + LOAD_BEFORE_SIGTERM_MS + SHUTDOWN_TIMEOUT_MS + 10_000;
    for (let i = 0; Date.now() < stopAt; i++) {
      const s = await post(agent, url, `drain-${n}-${w}-${i}@example.com`);
      sent.push(s);
      if (s.error === "ECONNREFUSED") break;
    }
    agent.destroy();
  };
  const writers = Array.from({ length: WRITERS }, (_, w) => writer(w));
  await delay(LOAD_BEFORE_SIGTERM_MS);
  const sigtermAt = Date.now();
  service.kill("SIGTERM");
  await Promise.all(writers);
  const exit = await exited;
  child = undefined;

  const closeLine = /^listener-close (\d+)$/m.exec(output);
  if (!closeLine) throw new Error(`no listener-close line from the service (probe not loaded?):\n${output}`);
  const closeAt = Number(closeLine[1]);
  const acknowledged = sent.filter((s) => s.status === 201 && s.id !== undefined);
  const missing = await missingWrites(databaseUrl, acknowledged);
  await adminQuery(postgres.url, `DROP DATABASE ${database} WITH (FORCE)`);
  const known = (s: Sent) =>
    s.error === "ECONNRESET" || s.error === "ECONNREFUSED" || (s.error === undefined && s.status === 201);
  return {
    sent: sent.length,
    answered: sent.filter((s) => s.status !== undefined).length,
    resetsSentMs: sent.filter((s) => s.error === "ECONNRESET").map((s) => s.sentAt - closeAt),
    refused: sent.filter((s) => s.error === "ECONNREFUSED").length,
    other: sent.filter((s) => !known(s)).length,
    acknowledged: acknowledged.length,
    missing,
    exit,
    closeAfterSigtermMs: closeAt - sigtermAt,
  };
}

const dir = await mkdtemp(path.join(os.tmpdir(), "scim-bench-drain-"));
await chmod(dir, 0o755); // the embedded PostgreSQL runs as `postgres` under root
let postgres: EmbeddedDatabase | undefined;
let emulator: RunningEmulator | undefined;
const results: Run[] = [];
try {
  postgres = await startEmbeddedPostgres(path.join(dir, "data"), {
    persistent: false,
    throwaway: true,
    database: "postgres",
  });
  emulator = await startEmulator();
  console.log(`bench:drain: ${app}, Node.js ${process.version}, ${os.cpus().length} cores, ${runs} runs`);
  for (let n = 1; n <= runs; n++) {
    const load = os.loadavg()[0]!.toFixed(1);
    const r = await run(n, postgres, emulator);
    results.push(r);
    const resets = r.resetsSentMs.length
      ? ` (sent ${r.resetsSentMs.map((ms) => (ms > 0 ? `+${ms}` : ms)).join(", ")} ms from the close)`
      : "";
    console.log(
      `run ${n}: sent ${r.sent}, answered ${r.answered}, ECONNRESET ${r.resetsSentMs.length}${resets}, ` +
        `ECONNREFUSED ${r.refused}, other ${r.other}, acknowledged missing ${r.missing} of ${r.acknowledged}, ` +
        `exit ${r.exit} (listener closed ${r.closeAfterSigtermMs} ms after SIGTERM; load ${load})`,
    );
  }
} finally {
  if (child && child.exitCode === null) child.kill("SIGKILL");
  await emulator?.close();
  await postgres?.stop();
  await rm(dir, { recursive: true, force: true });
}

const sum = (pick: (r: Run) => number) => results.reduce((total, r) => total + pick(r), 0);
const resets = sum((r) => r.resetsSentMs.length);
const missing = sum((r) => r.missing);
const clean = results.filter((r) => r.exit === 0).length;
const pass = missing === 0 && clean === runs;
console.log(
  `${runs} runs: sent ${sum((r) => r.sent)}, ECONNRESET ${resets} in ${results.filter((r) => r.resetsSentMs.length).length} ` +
    `of ${runs} runs (reported, not judged), acknowledged missing ${missing} of ${sum((r) => r.acknowledged)}, ` +
    `exit 0 in ${clean} of ${runs}: ${pass ? "pass" : "FAIL"}`,
);
process.exit(pass ? 0 : 1);
