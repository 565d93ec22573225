/**
 * Emulator throughput: SCIM GETs by id and `POST /email/status`, at concurrency 32 over
 * keep-alive connections. The emulator runs in a child process (as `scim-connector emulator`
 * would), so client and server each get a core. Target: at least 3,000 requests/s each.
 *
 * The load generator is a lean HTTP/1.1 client over 32 persistent sockets (what autocannon
 * does): Node's http.Agent costs more CPU per request than the emulator, and on 2 cores the
 * client would otherwise be what is measured. `--node-client` uses http.Agent instead.
 *
 *   npm run bench:emulator [-- --seconds 5 --concurrency 32 --in-process --node-client]
 */
import { spawn, type ChildProcess } from "node:child_process";
import net from "node:net";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { startEmulator } from "../src/emulator/index.js";
import { keepAliveClient } from "./support/httpClient.js";
import { cpuMsOf } from "./support/processCpu.js";

const TARGET_PER_SECOND = 3_000;
const SCIM_HEADERS = {
  authorization: "Bearer dev-scim-token",
  "x-request-origin": "bench",
  "content-type": "application/json",
};
const API_HEADERS = { authorization: "Bearer dev-api-key", "content-type": "application/json" };

const { values } = parseArgs({
  options: {
    serve: { type: "boolean", default: false },
    "in-process": { type: "boolean", default: false },
    seconds: { type: "string", default: "5" },
    concurrency: { type: "string", default: "32" },
    "node-client": { type: "boolean", default: false },
  },
});

/** The emulator child's pid, for its CPU time. */
let serverPid: number | undefined;

// The benchmark issues far more than 5,000 SCIM calls; the daily budget is lifted for it alone.
const BENCH_OPTIONS = { port: 0, scimDailyLimit: 1_000_000_000 };

async function main(): Promise<void> {
  const seconds = Number(values.seconds);
  const concurrency = Number(values.concurrency);
  const { url, stop } = values["in-process"] ? await inProcess() : await childProcess();
  const nodeClient = keepAliveClient(url, concurrency);
  const call = nodeClient.call;
  const target = new URL(url);

  try {
    const ids: string[] = [];
    for (let i = 0; i < 200; i++) {
      const res = await call(
        "POST",
        "/scim/v2/Users",
        SCIM_HEADERS,
        JSON.stringify(dashboardUser(`bench${i}@example.com`)),
      );
      ids.push((JSON.parse(res.text) as { id: string }).id);
    }
    const emails = Array.from({ length: 5_000 }, (_, i) => `reader${i}@example.com`);
    const states = ["subscribed", "unsubscribed", "opted_in"];

    console.log(
      `load average before the run: ${(await import("node:os")).loadavg()[0]!.toFixed(2)} on ${(await import("node:os")).cpus().length} cores`,
    );
    const client = values["node-client"] ? "http.Agent keep-alive client" : "lean keep-alive client";
    console.log(
      `emulator throughput: ${concurrency} concurrent connections (${client}), ${seconds}s per scenario, ${values["in-process"] ? "in-process" : "emulator in a child process"}`,
    );
    const connections = values["node-client"]
      ? []
      : await Promise.all(
          Array.from({ length: concurrency }, () => RawConnection.open(target.hostname, Number(target.port))),
        );
    const sender = (method: string, headers: Record<string, string>) => {
      const head = Object.entries(headers)
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join("");
      return (worker: number, path: string, body?: string): Promise<{ status: number }> =>
        values["node-client"]
          ? call(method, path, headers, body)
          : connections[worker]!.send(
              `${method} ${path} HTTP/1.1\r\nHost: ${target.host}\r\n${head}${body === undefined ? "" : `Content-Length: ${Buffer.byteLength(body)}\r\n`}\r\n${body ?? ""}`,
            );
    };
    const getUser = sender("GET", SCIM_HEADERS);
    const postStatus = sender("POST", API_HEADERS);
    const results = [
      await scenario("SCIM GET /scim/v2/Users/{id}", seconds, concurrency, 200, (w, i) =>
        getUser(w, `/scim/v2/Users/${ids[i % ids.length]}`),
      ),
      await scenario("POST /email/status", seconds, concurrency, 200, (w, i) =>
        postStatus(
          w,
          "/email/status",
          JSON.stringify({ email: emails[i % emails.length], subscription_state: states[i % 3] }),
        ),
      ),
    ];
    for (const c of connections) c.close();
    for (const r of results) {
      const verdict = r.perSecond >= TARGET_PER_SECOND ? "meets" : "BELOW";
      console.log(
        `${r.name.padEnd(32)} ${r.perSecond.toFixed(0).padStart(7)} req/s  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms  errors ${r.errors}  ${verdict} target ${TARGET_PER_SECOND}/s (×${(r.perSecond / TARGET_PER_SECOND).toFixed(2)})`,
      );
      if (r.serverCpuMicros !== undefined) {
        const capacity = 1e6 / r.serverCpuMicros;
        console.log(
          `${"".padEnd(32)} emulator CPU ${r.serverCpuMicros.toFixed(0)} µs/request → ${capacity.toFixed(0)} req/s per fully available core (×${(capacity / TARGET_PER_SECOND).toFixed(2)} the target)`,
        );
      }
    }
    if (results.some((r) => r.perSecond < TARGET_PER_SECOND || r.errors > 0)) process.exitCode = 1;
  } finally {
    nodeClient.close();
    await stop();
  }
}

type Result = { name: string; perSecond: number; p50: number; p99: number; errors: number; serverCpuMicros?: number };

/**
 * CPU seconds the emulator process has used (Linux /proc), so the report can show the server's
 * cost per request: a figure that does not depend on what else the machine is running.
 */
function processCpuSeconds(pid: number | undefined): number | undefined {
  const ms = pid === undefined ? undefined : cpuMsOf([pid]);
  return ms === undefined ? undefined : ms / 1000;
}

async function scenario(
  name: string,
  seconds: number,
  concurrency: number,
  expected: number,
  send: (worker: number, i: number) => Promise<{ status: number }>,
): Promise<Result> {
  // A short warm-up so the JIT and the connection pool are ready before timing.
  const warmUntil = performance.now() + 500;
  let counter = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      while (performance.now() < warmUntil) await send(w, counter++);
    }),
  );
  const latencies: number[] = [];
  let errors = 0;
  const cpuBefore = processCpuSeconds(serverPid);
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      while (performance.now() < until) {
        const t0 = performance.now();
        const res = await send(w, counter++);
        latencies.push(performance.now() - t0);
        if (res.status !== expected) errors += 1;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const cpuAfter = processCpuSeconds(serverPid);
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  const serverCpuMicros =
    cpuBefore !== undefined && cpuAfter !== undefined ? ((cpuAfter - cpuBefore) * 1e6) / latencies.length : undefined;
  return { name, perSecond: latencies.length / elapsed, p50: at(0.5), p99: at(0.99), errors, serverCpuMicros };
}

async function inProcess(): Promise<{ url: string; stop: () => Promise<void> }> {
  const emulator = await startEmulator(BENCH_OPTIONS);
  return { url: emulator.url, stop: () => emulator.close() };
}

async function childProcess(): Promise<{ url: string; stop: () => Promise<void> }> {
  const child: ChildProcess = spawn(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url), "--serve"],
    {
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, LOG_LEVEL: "warn" },
    },
  );
  serverPid = child.pid;
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

/**
 * One persistent HTTP/1.1 connection, one request in flight. The emulator always answers with a
 * Content-Length (or a bodiless 204), so a response ends after the headers plus that many bytes.
 */
class RawConnection {
  private buffer: Buffer = Buffer.alloc(0);
  private waiting?: { resolve: (r: { status: number }) => void; reject: (e: Error) => void };

  private constructor(private readonly socket: net.Socket) {
    socket.setNoDelay(true);
    socket.on("data", (chunk: Buffer) => this.onData(chunk));
    socket.on("error", (error) => this.waiting?.reject(error));
  }

  static open(host: string, port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, host, () => resolve(new RawConnection(socket)));
      socket.once("error", reject);
    });
  }

  send(request: string): Promise<{ status: number }> {
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.socket.write(request);
    });
  }

  close(): void {
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    const headerEnd = this.buffer.indexOf("\r\n\r\n");
    if (headerEnd < 0) return;
    const head = this.buffer.toString("latin1", 0, headerEnd);
    const status = Number(head.slice(9, 12));
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
    const end = headerEnd + 4 + length;
    if (this.buffer.length < end) return;
    this.buffer = this.buffer.subarray(end);
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.resolve({ status });
  }
}

function dashboardUser(userName: string) {
  return {
    schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
    userName,
    name: { givenName: "Bench", familyName: "User" },
    department: "engineering",
    permissions: {
      companyPermissions: ["basic_access"],
      appGroup: [{ appGroupName: "Production", appGroupPermissions: ["admin"], team: [] }],
    },
  };
}

// Last, so every declaration above is initialised before the top-level await runs.
if (values.serve) {
  const emulator = await startEmulator(BENCH_OPTIONS);
  process.stdout.write(`${emulator.url}\n`);
  process.on("SIGTERM", () => void emulator.close().then(() => process.exit(0)));
  // Do not outlive a benchmark that died without stopping us.
  process.stdout.on("error", () => process.exit(0));
  setInterval(() => process.ppid === 1 && process.exit(0), 1_000).unref();
} else {
  await main();
}
