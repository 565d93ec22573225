/**
 * The floor under bench:scim's CPU per filter GET: what one keep-alive GET costs a Node process
 * that answers it from PostgreSQL with no SCIM work at all (one prepared statement, one JSON body),
 * served three ways:
 *
 * - `bare`: node:http alone;
 * - `express`: the same handler as an Express 5 route (what the service pays per request to Express);
 * - `express-born`: Express, on request and response classes born with the app's prototypes
 *   (src/http/serverClasses.ts), as the service runs it.
 *
 * The gap between `bare` and `express` is Express's own per-request cost, and most of it is its
 * prototype swap (`Object.setPrototypeOf` on every request and response), which `express-born`
 * removes. Same method as bench:scim: a child process per server, 32 keep-alive clients, the
 * child's process CPU (user + system, /proc) over the requests it answered.
 *
 *   npm run bench:floor [-- --seconds 4 --concurrency 32]
 */
import { spawn } from "node:child_process";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { createServer, IncomingMessage, ServerResponse } from "node:http";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import express from "express";
import pg from "pg";
import { startEmbeddedPostgres } from "../src/db/embedded.js";
import { serverClasses } from "../src/http/serverClasses.js";
import { keepAliveClient } from "./support/httpClient.js";
import { cpuMsOf } from "./support/processCpu.js";

const MODES = ["bare", "express", "express-born"] as const;
type Mode = (typeof MODES)[number];
const USERS = 2_000;
const SELECT = `SELECT id, resource, version, created_at, updated_at, count(*) OVER ()::int AS total
  FROM floor_users WHERE lower(user_name) = lower($1) ORDER BY created_at, id LIMIT 100`;

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "4" },
    concurrency: { type: "string", default: "32" },
    serve: { type: "string" },
    mode: { type: "string" },
  },
});

if (values.serve) await serve(values.serve, values.mode as Mode);
else await main(Number(values.seconds), Number(values.concurrency));

async function serve(databaseUrl: string, mode: Mode): Promise<void> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  const handler = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const filter = new URL(req.url ?? "/", "http://floor").searchParams.get("filter") ?? "";
    const userName = /userName eq "([^"]*)"/.exec(filter)?.[1] ?? "";
    const { rows } = await pool.query({ name: "floor", text: SELECT, values: [userName] });
    const body = JSON.stringify({
      schemas: ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
      totalResults: rows[0]?.total ?? 0,
      startIndex: 1,
      itemsPerPage: rows.length,
      Resources: rows.map((r) => ({
        ...r.resource,
        id: r.id,
        meta: { created: r.created_at.toISOString(), lastModified: r.updated_at.toISOString(), version: r.version },
      })),
    });
    res.writeHead(200, { "Content-Type": "application/scim+json; charset=utf-8" });
    res.end(body);
  };
  let server;
  if (mode === "bare") server = createServer((req, res) => void handler(req, res));
  else {
    const app = express();
    app.get("/scim/v2/Users", handler);
    const classes = mode === "express-born" ? serverClasses() : undefined;
    server = classes
      ? createServer({ IncomingMessage: classes.IncomingMessage, ServerResponse: classes.ServerResponse })
      : createServer();
    classes?.adopt(app);
    server.on("request", app);
  }
  server.listen(0, "127.0.0.1", () => {
    const address = server.address();
    process.stdout.write(`http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}\n`);
  });
}

async function main(seconds: number, concurrency: number): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "bench-floor-"));
  await chmod(dir, 0o755); // initdb may run as another user (postgres) when this runs as root
  const db = await startEmbeddedPostgres(path.join(dir, "data"));
  try {
    const seed = new pg.Client({ connectionString: db.url });
    await seed.connect();
    await seed.query(`CREATE TABLE floor_users (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), user_name text NOT NULL,
      resource jsonb NOT NULL, version int NOT NULL DEFAULT 1, created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now())`);
    await seed.query(`CREATE INDEX ON floor_users (lower(user_name))`);
    await seed.query(
      `INSERT INTO floor_users (user_name, resource)
       SELECT 'u' || i || '@example.com', jsonb_build_object('userName', 'u' || i || '@example.com',
              'name', jsonb_build_object('givenName', 'Bench', 'familyName', 'User'), 'active', true)
         FROM generate_series(1, $1::int) i`,
      [USERS],
    );
    await seed.end();
    console.log(`GET /scim/v2/Users?filter=userName eq, ${concurrency} keep-alive clients, ${seconds}s per server`);
    const figures = new Map<Mode, number>();
    for (const mode of MODES) {
      const cpuMs = await measure(db.url, mode, seconds, concurrency);
      figures.set(mode, cpuMs);
      console.log(
        `${mode.padEnd(13)} CPU per request ${cpuMs.toFixed(3)} ms (load average ${os.loadavg()[0]!.toFixed(1)})`,
      );
    }
    const bare = figures.get("bare")!;
    console.log(
      `Express costs ${(figures.get("express")! - bare).toFixed(3)} ms per request on its own classes, ` +
        `${(figures.get("express-born")! - bare).toFixed(3)} ms on classes born with its prototypes`,
    );
  } finally {
    await db.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

async function measure(databaseUrl: string, mode: Mode, seconds: number, concurrency: number): Promise<number> {
  const child = spawn(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url), "--serve", databaseUrl, "--mode", mode],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  try {
    const url = await new Promise<string>((resolve) => createInterface({ input: child.stdout! }).once("line", resolve));
    const client = keepAliveClient(url, concurrency);
    const run = async (ms: number): Promise<number> => {
      let answered = 0;
      const end = Date.now() + ms;
      await Promise.all(
        Array.from({ length: concurrency }, async (_, worker) => {
          for (let i = worker; Date.now() < end; i += concurrency) {
            const filter = encodeURIComponent(`userName eq "u${1 + (i % USERS)}@example.com"`);
            const res = await client.call("GET", `/scim/v2/Users?filter=${filter}`, {});
            if (res.status !== 200) throw new Error(`${mode}: ${res.status} ${res.text}`);
            answered++;
          }
        }),
      );
      return answered;
    };
    await run(1_000); // warm-up: JIT and the prepared statement on each connection
    const before = cpuMsOf([child.pid!]);
    const answered = await run(seconds * 1_000);
    const after = cpuMsOf([child.pid!]);
    if (before === undefined || after === undefined)
      throw new Error("bench:floor reads CPU time from /proc (Linux only)");
    const cpuMs = (after - before) / answered;
    client.close();
    return cpuMs;
  } finally {
    child.kill();
  }
}
