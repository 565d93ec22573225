/**
 * Emulator throughput: SCIM GETs by id and `POST /email/status`, at concurrency 32 over
 * keep-alive connections. The emulator runs in a child process (as `scim-connector emulator`
 * would), so client and server each get a core. Target: at least 3,000 requests/s each.
 *
 *   npm run bench:emulator [-- --seconds 5 --concurrency 32 --in-process]
 */
import { spawn, type ChildProcess } from "node:child_process";
import http from "node:http";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { startEmulator } from "../src/emulator/index.js";

const TARGET_PER_SECOND = 3_000;
const SCIM_HEADERS = { authorization: "Bearer dev-scim-token", "x-request-origin": "bench", "content-type": "application/json" };
const API_HEADERS = { authorization: "Bearer dev-api-key", "content-type": "application/json" };

const { values } = parseArgs({
  options: {
    serve: { type: "boolean", default: false },
    "in-process": { type: "boolean", default: false },
    seconds: { type: "string", default: "5" },
    concurrency: { type: "string", default: "32" },
  },
});

// The benchmark issues far more than 5,000 SCIM calls; the daily budget is lifted for it alone.
const BENCH_OPTIONS = { port: 0, scimDailyLimit: 1_000_000_000 };

if (values.serve) {
  const emulator = await startEmulator(BENCH_OPTIONS);
  process.stdout.write(`${emulator.url}\n`);
  process.on("SIGTERM", () => void emulator.close().then(() => process.exit(0)));
} else {
  await main();
}

async function main(): Promise<void> {
  const seconds = Number(values.seconds);
  const concurrency = Number(values.concurrency);
  const { url, stop } = values["in-process"] ? await inProcess() : await childProcess();
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const target = new URL(url);
  const call = (method: string, path: string, headers: Record<string, string>, body?: string) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = http.request({ host: target.hostname, port: target.port, method, path, headers, agent }, (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on("error", reject);
      req.end(body);
    });

  try {
    const ids: string[] = [];
    for (let i = 0; i < 200; i++) {
      const res = await call("POST", "/scim/v2/Users", SCIM_HEADERS, JSON.stringify(dashboardUser(`bench${i}@example.com`)));
      ids.push((JSON.parse(res.text) as { id: string }).id);
    }
    const emails = Array.from({ length: 5_000 }, (_, i) => `reader${i}@example.com`);
    const states = ["subscribed", "unsubscribed", "opted_in"];

    console.log(`emulator throughput: ${concurrency} concurrent keep-alive clients, ${seconds}s per scenario, ${values["in-process"] ? "in-process" : "emulator in a child process"}`);
    const results = [
      await scenario("SCIM GET /scim/v2/Users/{id}", seconds, concurrency, 200, (i) => call("GET", `/scim/v2/Users/${ids[i % ids.length]}`, SCIM_HEADERS)),
      await scenario("POST /email/status", seconds, concurrency, 200, (i) =>
        call("POST", "/email/status", API_HEADERS, JSON.stringify({ email: emails[i % emails.length], subscription_state: states[i % 3] })),
      ),
    ];
    for (const r of results) {
      const verdict = r.perSecond >= TARGET_PER_SECOND ? "meets" : "BELOW";
      console.log(`${r.name.padEnd(32)} ${r.perSecond.toFixed(0).padStart(7)} req/s  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms  errors ${r.errors}  ${verdict} target ${TARGET_PER_SECOND}/s (×${(r.perSecond / TARGET_PER_SECOND).toFixed(2)})`);
    }
    if (results.some((r) => r.perSecond < TARGET_PER_SECOND || r.errors > 0)) process.exitCode = 1;
  } finally {
    agent.destroy();
    await stop();
  }
}

type Result = { name: string; perSecond: number; p50: number; p99: number; errors: number };

async function scenario(name: string, seconds: number, concurrency: number, expected: number, send: (i: number) => Promise<{ status: number }>): Promise<Result> {
  // A short warm-up so the JIT and the connection pool are ready before timing.
  const warmUntil = performance.now() + 500;
  let counter = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (performance.now() < warmUntil) await send(counter++);
  }));
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (performance.now() < until) {
      const t0 = performance.now();
      const res = await send(counter++);
      latencies.push(performance.now() - t0);
      if (res.status !== expected) errors += 1;
    }
  }));
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return { name, perSecond: latencies.length / elapsed, p50: at(0.5), p99: at(0.99), errors };
}

async function inProcess(): Promise<{ url: string; stop: () => Promise<void> }> {
  const emulator = await startEmulator(BENCH_OPTIONS);
  return { url: emulator.url, stop: () => emulator.close() };
}

async function childProcess(): Promise<{ url: string; stop: () => Promise<void> }> {
  const child: ChildProcess = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), "--serve"], {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, LOG_LEVEL: "warn" },
  });
  const url = await new Promise<string>((resolve, reject) => {
    let buffered = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      buffered += chunk.toString();
      const line = buffered.split("\n").find((l) => l.startsWith("http://"));
      if (line) resolve(line.trim());
    });
    child.once("exit", (code) => reject(new Error(`emulator child exited early (${code})`)));
  });
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

function dashboardUser(userName: string) {
  return {
    schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
    userName,
    name: { givenName: "Bench", familyName: "User" },
    department: "engineering",
    permissions: { companyPermissions: ["basic_access"], appGroup: [{ appGroupName: "Production", appGroupPermissions: ["admin"], team: [] }] },
  };
}
