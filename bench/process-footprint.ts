// `npm run bench:footprint -- <built app dir> [writes]`: the figures behind deploy/kubernetes'
// resource requests. Starts `node dist/main.js` of a build (`npm run build -- <dir>/dist`, with
// node_modules and config beside it) on its embedded PostgreSQL and emulator, writes users with 16
// keep-alive clients, and reads the process's own RSS and CPU from its /metrics, idle and after the
// load. Run it with another Node.js (`npx -y node@24.21.0 node_modules/tsx/dist/cli.mjs bench/…`)
// to measure that one: the service runs on the Node.js that runs this.
import { spawn } from "node:child_process";
import { Agent, request } from "node:http";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { freePort } from "../src/db/embedded.js";

const app = path.resolve(process.argv[2] ?? "dist/..");
const writes = Number(process.argv[3] ?? 3000);
const CLIENTS = 16;
const TOKEN = "footprint-idp-token-0123456789abcdefgh";
const port = await freePort();
const url = `http://127.0.0.1:${port}`;
const child = spawn(process.execPath, ["dist/main.js"], {
  cwd: app,
  env: {
    PATH: process.env.PATH,
    HOST: "127.0.0.1",
    PORT: String(port),
    EMBEDDED_PG_DIR: path.join(app, ".data/postgres"),
    SCIM_TOKEN: TOKEN,
    RESYNC_CRON: "off",
    LOG_LEVEL: "error",
    RECONCILE_SETTLE_MS: "0",
    SHUTDOWN_DELAY_MS: "0",
    MAPPING_FILE: path.resolve("config/mapping.example.yaml"),
  },
  stdio: ["ignore", "pipe", "inherit"],
});
let banner = "";
child.stdout.on("data", (d: Buffer) => (banner += d.toString()));
while (!banner.includes("SCIM base URL")) {
  if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}`);
  await delay(200);
}
const metric = async (name: string) =>
  Number(new RegExp(`^${name} (\\S+)$`, "m").exec(await (await fetch(`${url}/metrics`)).text())?.[1]);
await delay(5_000); // settled after the boot
const idleRss = await metric("process_resident_memory_bytes");
const idleCpu = await metric("process_cpu_seconds_total");

const post = (agent: Agent, i: number) =>
  new Promise<void>((resolve) => {
    const req = request(
      `${url}/scim/v2/Users`,
      {
        method: "POST",
        agent,
        headers: { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/scim+json" },
      },
      (res) => res.resume().on("end", resolve),
    );
    req.on("error", () => resolve());
    req.end(
      JSON.stringify({
        schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
        userName: `footprint-${i}-${port}@example.com`,
        name: { givenName: "Foot", familyName: "Print" },
        active: true,
      }),
    );
  });
let next = 0;
const started = Date.now();
await Promise.all(
  Array.from({ length: CLIENTS }, async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    while (next < writes) await post(agent, next++);
    agent.destroy();
  }),
);
const seconds = (Date.now() - started) / 1000;
const loadedRss = await metric("process_resident_memory_bytes");
const loadedCpu = await metric("process_cpu_seconds_total");
const mb = (bytes: number) => Math.round(bytes / 2 ** 20);
console.log(
  JSON.stringify({
    node: process.version,
    idleRssMiB: mb(idleRss),
    loadedRssMiB: mb(loadedRss),
    writes,
    seconds: Number(seconds.toFixed(1)),
    writesPerSecond: Math.round(writes / seconds),
    cpuCoresDuringLoad: Number(((loadedCpu - idleCpu) / seconds).toFixed(2)),
  }),
);
child.kill("SIGTERM");
await new Promise((resolve) => child.once("exit", resolve));
