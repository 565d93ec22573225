/**
 * The filter GET's data path in-process (issue 16): the token check, then the /Users list handler
 * (src/http/scim/users.ts: list parameters → listUsers → presentUser → project) on a
 * querystring-parsed query, then JSON, without HTTP, against the embedded PostgreSQL with 2,000 users.
 * Reports the process CPU (process.cpuUsage, user + system) per call for the whole path at a given
 * concurrency, and per stage: the database stages at the same concurrency, the synchronous stages
 * in a tight loop. On a shared machine the database stages move by a few µs between runs; compare
 * runs made back to back.
 *
 *   npm run bench:datapath [-- --calls 20000 --concurrency 24 --users 2000 --rounds 3]
 *
 * STAGES=<prefix,...> runs only the stages whose names start so; PROFILE=<file> writes a CPU
 * profile of the stages run (read it with `npm run bench:scim -- --summarise <file>`);
 * SOCKET_DIR=<dir> connects over PostgreSQL's Unix socket in that directory instead of loopback TCP.
 */
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import querystring from "node:querystring";
import { parseArgs } from "node:util";
import { startEmbeddedPostgres } from "../src/db/embedded.js";
import { openDatabase } from "../src/db/dataSource.js";
import { ScimTokenVerifier } from "../src/auth/scimTokens.js";
import { TokenRepository } from "../src/db/auth/tokenRepository.js";
import { parseListParams } from "../src/http/scim/params.js";
import { listResponse } from "../src/http/scim/respond.js";
import { userHandlers } from "../src/http/scim/users.js";
import { benchUser } from "./support/scimUser.js";
import { createUser, listUsers } from "../src/scim/userCommands.js";
import { presentUser } from "../src/scim/resources.js";
import { createScimDirectory } from "../src/scim/frontDoor.js";
import { parseProjection, project } from "../src/scim/projection.js";
import { parseFilter } from "../src/scim/filter.js";
import { setLogLevel } from "../src/logging/logger.js";
import { filterToSql } from "../src/db/idp/filterSql.js";
import type { Page, StoredResource } from "../src/db/idp/paging.js";

const { values } = parseArgs({
  options: {
    calls: { type: "string", default: "20000" },
    concurrency: { type: "string", default: "24" },
    users: { type: "string", default: "2000" },
    rounds: { type: "string", default: "3" },
  },
});
const CALLS = Number(values.calls);
const CONCURRENCY = Number(values.concurrency);
const USERS = Number(values.users);
const ROUNDS = Number(values.rounds);
const TOKEN = "bench-scim-token-0123456789abcdef";
const BASE_URL = "http://127.0.0.1:8080/scim/v2";
const BY_NAME = `SELECT id, resource, version, created_at, updated_at FROM idp_users WHERE lower(user_name) = lower($1::text)`;

setLogLevel("warn"); // not a line per seeded user
const dir = await mkdtemp(path.join(os.tmpdir(), "scim-datapath-"));
await chmod(dir, 0o755);
const pg = await startEmbeddedPostgres(path.join(dir, "data"), { persistent: false });
const url = process.env.SOCKET_DIR
  ? pg.url.replace("@127.0.0.1:", `@${encodeURIComponent(process.env.SOCKET_DIR)}:`)
  : pg.url;
const db = await openDatabase({ url, poolSize: 10, applicationName: "scim-datapath-bench" });

function cpuUs(work: () => void): number {
  const start = process.cpuUsage();
  work();
  const used = process.cpuUsage(start);
  return used.user + used.system;
}

/** Of the last measurement: the share of system time (syscalls: the socket writes and reads). */
let lastSystem = 0;

async function cpuUsAsync(work: () => Promise<void>): Promise<number> {
  const start = process.cpuUsage();
  await work();
  const used = process.cpuUsage(start);
  lastSystem = used.system;
  return used.user + used.system;
}

async function concurrently(calls: number, concurrency: number, one: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < calls) await one(next++);
    }),
  );
}

try {
  await db.migrate();
  const userNames: string[] = [];
  await concurrently(USERS, 16, async (i) => {
    const userName = `seed${i}@example.com`;
    userNames[i] = userName;
    await createUser(db, benchUser(userName), { method: "POST" });
  });
  const verifier = new ScimTokenVerifier(new TokenRepository(db), TOKEN);
  const queries = userNames.map((u) => `filter=${encodeURIComponent(`userName eq "${u}"`)}`);
  const queryOf = (i: number) => queries[(i * 7919) % queries.length]!;

  const users = userHandlers({ scimDirectory: createScimDirectory(db), baseUrl: BASE_URL, maxPageSize: 1000 });
  const context = { method: "GET" };
  const getOne = async (i: number): Promise<string> => {
    if (!(await verifier.verify(TOKEN))) throw new Error("token refused");
    const reply = await users.list({ query: querystring.parse(queryOf(i)), body: undefined, context }, "");
    return JSON.stringify(reply.body);
  };
  const sample = await getOne(3);
  if (!sample.includes('"totalResults":1')) throw new Error(`unexpected answer ${sample}`);
  await concurrently(4000, CONCURRENCY, getOne); // warm up: JIT, prepared statements on every connection

  const pages: Page<StoredResource>[] = [];
  const paramsList = Array.from({ length: 2000 }, (_, i) => parseListParams(querystring.parse(queryOf(i)), 1000));
  for (let i = 0; i < 64; i++) pages.push(await listUsers(db, paramsList[i]!));
  const projection = parseProjection("User", undefined, undefined);

  const stages: Record<string, () => Promise<number>> = {
    "whole path": () => cpuUsAsync(() => concurrently(CALLS, CONCURRENCY, getOne)),
    "listUsers (db)": () =>
      cpuUsAsync(() => concurrently(CALLS, CONCURRENCY, (i) => listUsers(db, paramsList[i % 2000]!))),
    "db.prepared only": async () => {
      const text = `SELECT u.id, u.resource, u.version, u.created_at, u.updated_at, count(*) OVER ()::int AS total
       FROM idp_users u WHERE (lower(u.user_name) = lower($1::text))
      ORDER BY u.created_at, u.id
      LIMIT $2 OFFSET $3`;
      return cpuUsAsync(() =>
        concurrently(CALLS, CONCURRENCY, (i) => db.prepared("bench_list", text, [userNames[i % USERS], 100, 0])),
      );
    },
    "db.prepared sequential": async () =>
      cpuUsAsync(async () => {
        for (let i = 0; i < CALLS; i++) await db.prepared("bench_by_name", BY_NAME, [userNames[i % USERS]]);
      }),
    "verify token": async () =>
      cpuUsAsync(async () => {
        for (let i = 0; i < CALLS; i++) await verifier.verify(TOKEN);
      }),
    "parse params": async () =>
      cpuUs(() => {
        for (let i = 0; i < CALLS; i++) parseListParams(querystring.parse(queryOf(i)), 1000);
      }),
    "parseFilter+filterToSql": async () =>
      cpuUs(() => {
        for (let i = 0; i < CALLS; i++) filterToSql("User", parseFilter(paramsList[i % 2000]!.filter!));
      }),
    "present+project+stringify": async () =>
      cpuUs(() => {
        for (let i = 0; i < CALLS; i++) {
          const page = pages[i % 64]!;
          JSON.stringify(
            listResponse(
              { startIndex: 1 },
              page.total,
              page.items.map((u) => project(presentUser(u, BASE_URL), projection)),
            ),
          );
        }
      }),
  };
  const only = process.env.STAGES?.split(",");
  const profileFile = process.env.PROFILE;
  const inspector = profileFile ? new (await import("node:inspector/promises")).Session() : undefined;
  if (inspector) {
    inspector.connect();
    await inspector.post("Profiler.enable");
    await inspector.post("Profiler.start");
  }
  for (const [name, run] of Object.entries(stages)) {
    if (only && !only.some((o) => name.startsWith(o))) continue;
    const results: number[] = [];
    const systems: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      lastSystem = 0;
      results.push((await run()) / CALLS);
      systems.push(lastSystem / CALLS);
    }
    results.sort((a, b) => a - b);
    console.log(
      `${name.padEnd(28)} µs/call: min ${results[0]!.toFixed(2)}  median ${results[Math.floor(results.length / 2)]!.toFixed(2)}  (${results.map((r) => r.toFixed(1)).join(" ")})  system ${systems.map((r) => r.toFixed(1)).join(" ")}`,
    );
  }
  if (inspector) {
    const { profile } = await inspector.post("Profiler.stop");
    await writeFile(profileFile!, JSON.stringify(profile));
  }
} finally {
  await db.close();
  await pg.stop();
  await rm(dir, { recursive: true, force: true });
}
