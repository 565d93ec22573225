/**
 * Inbound SCIM throughput: filter GETs (`userName eq`), user POSTs and group member PATCHes (adds
 * and removes measured apart) at concurrency 32 over keep-alive connections, against the embedded
 * PostgreSQL with its default (durable) settings. Every PATCH is a real change: adds take (group,
 * user) pairs never added before, removes take pairs added before measuring, so each marks its
 * user for reconciling. The service runs in a child process, as it would in production, so the
 * load generator does not share its event loop. Everything is measured twice: with the workers
 * off (inbound alone), then with the reconciler and the mirror worker running against an
 * emulator, as the service runs. Targets on a 2-core machine (issue 16): at least 1,500 filter
 * GETs/s and 400 writes/s with p99 under 20 ms at those rates, the service's own CPU at most
 * 0.12 ms per filter GET and 0.40 ms per POST, with 2,000 and with 20,000 users stored, and the
 * service's RSS after the bench under 200 MB. The RSS is read as the load ends and again after a full
 * garbage collection: the first includes garbage V8 lets pile up while it is busy (it grows with the
 * bench's length), the second is what the process keeps, and is the one held to the target.
 *
 * CPU per request is the child's process CPU time (user + system, from /proc) over the requests it
 * answered while measuring: unlike latency it hardly moves with the load of the neighbours.
 *
 *   npm run bench:scim [-- --seconds 5 --concurrency 32 --users 2000,20000 --only get,post,put,userpatch,patch
 *                         --workers off,on --baseline <commit> --profile <dir> --auth bearer|access]
 *
 * --auth access: the IdP presents an OAuth access token (a client made in the child's database,
 * client_credentials at /oauth/token) instead of the bearer token, to compare their CPU per request.
 *
 * --baseline <commit|tag|previous-release>: the same scenarios, in the same run, against the service
 * of that commit (its src/ extracted with `git archive` into a temporary directory); the table puts
 * both side by side. previous-release is the newest tag reachable from HEAD that is not on HEAD
 * itself; without tags, the newest commit before HEAD that set package.json's version.
 *
 * The member PATCHes' (group, user) pairs are made to the run's measure: a scenario is measured in
 * stretches whose pairs are made before each (fresh pairs, and for the removes pairs added as
 * members in bulk), sized from the rate just seen; when a stretch uses them up before its time, the
 * next is prepared for the time left. So no scenario runs out however fast the machine and however
 * long --seconds, and nothing is prepared while the clock runs.
 * --profile <dir>: the child samples its own CPU (node:inspector) during each saturated scenario and
 * writes <dir>/<code>-<users>-<scenario>.cpuprofile; the top frames are printed (also: --summarise <file>).
 * --json <file>: every run's figures as JSON; --new-first: with --baseline, this tree measured first
 * (bench/release-check.ts alternates the order between its runs).
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync, symlinkSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rm } from "node:fs/promises";
import { createInterface } from "node:readline";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { writeFile } from "node:fs/promises";
import { startEmbeddedPostgres } from "../src/db/embedded.js";
import { startEmulator } from "../src/emulator/index.js";
import { TEST_MAPPING } from "../test/support/mapping.js";
import { keepAliveClient } from "./support/httpClient.js";
import { cpuMsOf } from "./support/processCpu.js";
import { benchUser } from "./support/scimUser.js";

const TOKEN = "bench-scim-token-0123456789abcdef";
/** The IdP's credential: the bearer token, or (--auth access) an OAuth access token the child takes at start. */
const HEADERS = { authorization: `Bearer ${TOKEN}`, "content-type": "application/scim+json" };
const TARGETS = { read: 1_500, write: 400, p99Ms: 20, rssMb: 200 };
/** The service's own CPU per request (issue 16), by scenario. */
const CPU_TARGETS_MS: Record<string, number> = { get: 0.12, post: 0.4 };
const HERE = path.dirname(fileURLToPath(import.meta.url));
const GROUPS = 64;
/** Pairs added before the first scenario, for the remove scenario to take away (each at most once); more are added if the run needs them. */
const PREADDED_PER_GROUP = 200;
/** Members added per PATCH when the bench adds pairs in bulk. */
const BULK_MEMBERS = 500;
/** Pairs ready for the warm-up of a member scenario (it ends early when they are used up). */
const WARM_UP_PAIRS = 2_000;
/** A stretch is prepared for this many times the requests the rate just seen would send in the time left. */
const STOCK_MARGIN = 1.5;

const { values } = parseArgs({
  options: {
    serve: { type: "string" },
    /** With --serve: the source tree whose service to start (a baseline), else this one. */
    root: { type: "string" },
    seconds: { type: "string", default: "5" },
    concurrency: { type: "string", default: "32" },
    users: { type: "string", default: "2000" },
    only: { type: "string", default: "get,post,put,userpatch,patch" },
    workers: { type: "string", default: "off,on" },
    baseline: { type: "string" },
    profile: { type: "string" },
    summarise: { type: "string" },
    /** Writes every run's figures to this file as JSON (bench/release-check.ts reads it). */
    json: { type: "string" },
    /** With --baseline: this tree's service measured first, the baseline's second (the default is the other way). */
    "new-first": { type: "boolean", default: false },
    /** bearer (SCIM_TOKEN) or access (an OAuth access token from /oauth/token, client_credentials). */
    auth: { type: "string", default: "bearer" },
  },
});

type Pair = { group: number; user: number };

/** A scenario's inputs that its requests use up, each at most once. */
type Stock = {
  /** How many are ready and not yet taken. */
  left(): number;
  /** Makes at least `count` ready (before a measured stretch, never during one). */
  prepare(count: number): Promise<void>;
};

type Call = (method: string, urlPath: string, body?: string) => Promise<{ status: number; text: string }>;

/** Pairs ready for requests, taken in order by index (not shift(): that moved them all each time). */
class PairQueue implements Stock {
  private readonly ready: Pair[] = [];
  private taken = 0;

  constructor(private readonly make: (count: number) => Promise<Pair[]>) {}

  left(): number {
    return this.ready.length - this.taken;
  }

  async prepare(count: number): Promise<void> {
    const missing = count - this.left();
    if (missing > 0) for (const pair of await this.make(missing)) this.ready.push(pair);
  }

  next(): Pair | undefined {
    return this.ready[this.taken++];
  }
}

/**
 * The (group, user) pairs of the member PATCHes, made as the run needs them. Fresh pairs come in
 * batches of GROUPS new groups × every user, shuffled so that consecutive pairs differ in group and
 * user; a batch is made (its groups created) only when the previous ones are all taken. `toAdd`
 * hands out fresh pairs; `toRemove` hands out fresh pairs it has first added as members, in bulk.
 */
class MemberPairs {
  readonly groupIds: string[] = [];
  /** Members the bench added in bulk (for the remove scenario), for the final check. */
  addedInBulk = 0;
  readonly toAdd = new PairQueue((count) => this.fresh(count));
  readonly toRemove = new PairQueue((count) => this.addMembers(count));
  private batch: Pair[] = [];
  private nextInBatch = 0;

  constructor(
    private readonly users: number,
    private readonly userIds: string[],
    private readonly call: Call,
  ) {}

  /** `count` pairs never handed out before. */
  async fresh(count: number): Promise<Pair[]> {
    const out: Pair[] = [];
    while (out.length < count) {
      if (this.nextInBatch === this.batch.length) await this.newBatch();
      const end = Math.min(this.batch.length, this.nextInBatch + count - out.length);
      for (let i = this.nextInBatch; i < end; i++) out.push(this.batch[i]!);
      this.nextInBatch = end;
    }
    return out;
  }

  /** `count` fresh pairs made members (a PATCH per group and BULK_MEMBERS), for removes to take away. */
  async addMembers(count: number): Promise<Pair[]> {
    const pairs = await this.fresh(count);
    const byGroup = new Map<number, string[]>();
    for (const p of pairs) {
      const members = byGroup.get(p.group) ?? [];
      if (!byGroup.has(p.group)) byGroup.set(p.group, members);
      members.push(this.userIds[p.user]!);
    }
    for (const [group, members] of byGroup) {
      for (let i = 0; i < members.length; i += BULK_MEMBERS) {
        const res = await this.call(
          "PATCH",
          `/Groups/${this.groupIds[group]}`,
          JSON.stringify({
            schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
            Operations: [
              { op: "add", path: "members", value: members.slice(i, i + BULK_MEMBERS).map((value) => ({ value })) },
            ],
          }),
        );
        if (res.status !== 204) throw new Error(`adding members for the removes: ${res.status} ${res.text}`);
      }
    }
    this.addedInBulk += pairs.length;
    return pairs;
  }

  private async newBatch(): Promise<void> {
    const first = this.groupIds.length;
    for (let g = first; g < first + GROUPS; g++) {
      const res = await this.call(
        "POST",
        "/Groups",
        JSON.stringify({
          schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
          displayName: `Analysts-bench-${g}`,
        }),
      );
      if (res.status !== 201) throw new Error(`creating a group: ${res.status} ${res.text}`);
      this.groupIds.push((JSON.parse(res.text) as { id: string }).id);
    }
    this.batch = shuffledPairs(GROUPS, this.users).map((p) => ({ group: first + p.group, user: p.user }));
    this.nextInBatch = 0;
  }
}

if (values.serve) {
  await serve(values.serve, values.root ?? path.resolve(HERE, ".."));
} else if (values.summarise) {
  console.log(summariseProfile(JSON.parse(readFileSync(values.summarise, "utf8")) as CpuProfile));
} else {
  await main();
}

/**
 * The child: starts the service of `root` and answers control lines on stdin (`profile-start`,
 * `profile-stop <file>`) with `ok` on stdout, so that each scenario can be profiled on its own.
 */
async function serve(databaseUrl: string, root: string): Promise<void> {
  const { loadEnv } = (await import(path.join(root, "src/config/env.ts"))) as typeof import("../src/config/env.js");
  const { startService } = (await import(path.join(root, "src/service.ts"))) as typeof import("../src/service.js");
  const service = await startService({
    env: loadEnv({ ...process.env, PORT: "0", HOST: "127.0.0.1", SCIM_TOKEN: TOKEN, LOG_LEVEL: "warn" }),
    databaseUrl,
  });
  const inspector = await import("node:inspector/promises");
  const session = new inspector.Session();
  session.connect();
  createInterface({ input: process.stdin }).on("line", (line) => {
    const [command, file] = line.split(" ");
    const done = (p: Promise<unknown>) =>
      void p.then(
        () => process.stdout.write("ok\n"),
        (error: unknown) => process.stdout.write(`error ${String(error)}\n`),
      );
    // A full collection, so that the RSS read next is what the process keeps, not garbage V8 has not yet collected.
    if (command === "gc") done(session.post("HeapProfiler.collectGarbage"));
    else if (command === "profile-start")
      done(session.post("Profiler.enable").then(() => session.post("Profiler.start")));
    else if (command === "profile-stop") {
      done(
        session
          .post("Profiler.stop")
          .then(async ({ profile }) => (await import("node:fs/promises")).writeFile(file!, JSON.stringify(profile))),
      );
    }
  });
  if (values.auth === "access") process.stdout.write(`token ${await accessToken(root, service)}\n`);
  process.stdout.write(`${service.url}\n`);
  process.on("SIGTERM", () => void service.close().then(() => process.exit(0)));
}

/** --auth access: a client made in the service's database, and an access token for it from /oauth/token. */
async function accessToken(root: string, service: { url: string; db: import("../src/db/database.js").Database }) {
  const { OAuthClients } = (await import(
    path.join(root, "src/auth/oauth/clients.ts")
  )) as typeof import("../src/auth/oauth/clients.js");
  const { OAuthRepository } = (await import(
    path.join(root, "src/db/auth/oauthRepository.ts")
  )) as typeof import("../src/db/auth/oauthRepository.js");
  const { systemClock } = (await import(path.join(root, "src/clock.ts"))) as typeof import("../src/clock.js");
  const made = await new OAuthClients(new OAuthRepository(service.db), systemClock).create(`bench-${process.pid}`);
  const res = await fetch(`${service.url}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "client_credentials",
      client_id: made.clientId,
      client_secret: made.secret,
    }),
  });
  if (res.status !== 200) throw new Error(`token endpoint answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { access_token: string }).access_token;
}

type Code = { label: string; root: string };
type Run = {
  code: string;
  users: number;
  workers: boolean;
  results: Result[];
  paced: Map<string, Result>;
  /** After a full GC: what the process keeps. */
  rssMb: number | undefined;
  /** As the load ended: includes garbage V8 had not collected yet. */
  loadedRssMb: number | undefined;
  load: number[];
};

async function main(): Promise<void> {
  const seconds = Number(values.seconds);
  const concurrency = Number(values.concurrency);
  const userCounts = values.users!.split(",").map(Number);
  const codes: Code[] = [{ label: "new", root: path.resolve(HERE, "..") }];
  let baselineDir: string | undefined;
  if (values.baseline) {
    const baseline = resolveBaseline(values.baseline);
    if ("refused" in baseline) {
      console.error(`--baseline ${values.baseline}: ${baseline.refused}`);
      process.exit(2);
    }
    console.log(`baseline: ${values.baseline} = ${baseline.label} (${baseline.commit.slice(0, 10)})`);
    baselineDir = await mkdtemp(path.join(os.tmpdir(), "scim-bench-base-"));
    codes.unshift({
      label: `old ${baseline.label}`,
      root: extractCommit(baseline.commit, baselineDir),
    });
    if (values["new-first"]) codes.reverse();
  }
  if (values.profile) await mkdir(values.profile, { recursive: true });
  const runs: Run[] = [];
  try {
    for (const users of userCounts) {
      for (const workers of values.workers!.split(",")) {
        if (workers !== "off" && workers !== "on")
          throw new Error(`--workers takes off, on or off,on (got ${workers})`);
        for (const code of codes) runs.push(await freshRun(code, users, workers === "on", seconds, concurrency));
      }
    }
  } finally {
    if (baselineDir) await rm(baselineDir, { recursive: true, force: true });
  }
  printSummary(runs, codes);
  if (values.json)
    await writeFile(
      values.json,
      JSON.stringify(
        {
          codes: codes.map((c) => c.label),
          loadAverage: os.loadavg(),
          cores: os.cpus().length,
          runs: runs.map(({ paced, ...run }) => ({ ...run, paced: Object.fromEntries(paced) })),
        },
        null,
        1,
      ),
    );
  const failed = runs.some((run) => run.code === "new" && !meetsAll(run));
  if (failed) process.exitCode = 1;
}

/**
 * The commit --baseline names: a commit or a tag (anything git resolves to a commit), or
 * `previous-release`, the newest tag reachable from HEAD that is not on HEAD itself (when HEAD is
 * the release being made, the one before it), or without tags the last commit that set the version.
 */
function resolveBaseline(name: string): { commit: string; label: string } | { refused: string } {
  const repo = path.resolve(HERE, "..");
  const git = (...args: string[]) => execFileSync("git", ["-C", repo, ...args], { encoding: "utf8" }).trim();
  if (name === "previous-release") {
    const head = git("rev-parse", "HEAD");
    const tags = git("tag", "--merged", "HEAD", "--sort=-creatordate").split("\n").filter(Boolean);
    if (tags.length === 0) return releaseByVersionBump(git, head);
    const previous = tags.find((tag) => git("rev-parse", `${tag}^{commit}`) !== head);
    if (!previous)
      return {
        refused: `the only tags reachable from HEAD are on HEAD itself (${tags.join(", ")}): no earlier release`,
      };
    return { commit: git("rev-parse", `${previous}^{commit}`), label: previous };
  }
  try {
    const commit = git("rev-parse", "--verify", "--quiet", `${name}^{commit}`);
    return { commit, label: commit.startsWith(name) ? commit.slice(0, 10) : name };
  } catch {
    return { refused: "not a commit or tag of this repository (git rev-parse found nothing)" };
  }
}

/**
 * Without tags (a clone without them, as CI's), the previous release is the newest commit that set
 * package.json's "version", other than HEAD: the release commit, as CHANGELOG.md's versions are made.
 */
function releaseByVersionBump(
  git: (...args: string[]) => string,
  head: string,
): { commit: string; label: string } | { refused: string } {
  const bumps = git("log", "--format=%H", "-G", '"version":', "HEAD", "--", "package.json").split("\n").filter(Boolean);
  const previous = bumps.find((commit) => commit !== head);
  if (!previous)
    return { refused: "no tags, and no commit before HEAD set package.json's version: no earlier release" };
  const version = (JSON.parse(git("show", `${previous}:package.json`)) as { version: string }).version;
  return {
    commit: previous,
    label: `v${version} (${previous.slice(0, 10)}, the commit that set the version; no tags)`,
  };
}

/** The commit's tree in `dir` (git archive), with this checkout's node_modules: the old service, same dependencies. */
function extractCommit(commit: string, dir: string): string {
  const repo = path.resolve(HERE, "..");
  const tar = execFileSync("git", ["-C", repo, "archive", "--format=tar", commit], { maxBuffer: 1 << 30 });
  execFileSync("tar", ["-x", "-C", dir], { input: tar });
  symlinkSync(path.join(repo, "node_modules"), path.join(dir, "node_modules"));
  return dir;
}

/** A fresh database (and emulator) for one code × users × workers line, so no line starts on another's data. */
async function freshRun(
  code: Code,
  users: number,
  workersOn: boolean,
  seconds: number,
  concurrency: number,
): Promise<Run> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "scim-bench-pg-"));
  await chmod(dir, 0o755);
  const pg = await startEmbeddedPostgres(path.join(dir, "data"), { persistent: false });
  // Workers on: the reconciler and the mirror worker run against an emulator; the groups match
  // the mapping's `^Analysts-` rule, so every membership change is a platform change to make.
  const emulator = workersOn ? await startEmulator({ port: 0, scimDailyLimit: 10_000_000 }) : undefined;
  const mappingFile = path.join(dir, "mapping.yaml");
  await writeFile(mappingFile, TEST_MAPPING);
  const childEnv: Record<string, string> = emulator
    ? {
        MAPPING_FILE: mappingFile,
        PLATFORM_URL: emulator.url,
        PLATFORM_SCIM_TOKEN: "dev-scim-token",
        PLATFORM_API_KEY: "dev-api-key",
        PLATFORM_REQUEST_ORIGIN: "scim-bench",
        PLATFORM_SCIM_DAILY_BUDGET: "10000000",
      }
    : { MAPPING_FILE: mappingFile };
  try {
    return await measure(code, users, pg.url, path.join(dir, "data"), seconds, concurrency, childEnv, workersOn);
  } finally {
    await emulator?.close();
    await pg.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

async function measure(
  code: Code,
  seedUsers: number,
  databaseUrl: string,
  dataDir: string,
  seconds: number,
  concurrency: number,
  childEnv: Record<string, string>,
  workersOn: boolean,
): Promise<Run> {
  const child = await childService(code.root, databaseUrl, childEnv);
  const { url, pid } = child;
  const serverCpu: CpuMeter = () => {
    const service = cpuMsOf([pid]);
    const postgres = cpuMsOf(postgresPids(dataDir));
    return service === undefined || postgres === undefined ? undefined : [service, postgres];
  };
  const client = keepAliveClient(url, concurrency);
  const call = (method: string, urlPath: string, body?: string) =>
    client.call(method, `/scim/v2${urlPath}`, HEADERS, body);

  try {
    const userNames: string[] = [];
    const userIds: string[] = [];
    await inParallel(seedUsers, concurrency, async (i) => {
      const userName = `seed${i}@example.com`;
      const res = await call("POST", "/Users", JSON.stringify(benchUser(userName)));
      userNames[i] = userName;
      userIds[i] = (JSON.parse(res.text) as { id: string }).id;
    });
    const pairs = new MemberPairs(seedUsers, userIds, call);
    await pairs.toRemove.prepare(GROUPS * PREADDED_PER_GROUP);
    const answered = { add: 0, remove: 0 };
    const memberPatch = async (op: "add" | "remove", pair: Pair | undefined) => {
      // Cannot happen: a send is made only while its stock has a pair (scenario's hasInput).
      if (!pair) throw new Error(`no (group, user) pair ready to ${op}: the bench's stock is wrong`);
      const userId = userIds[pair.user]!;
      const operation =
        op === "add"
          ? { op, path: "members", value: [{ value: userId }] }
          : { op, path: `members[value eq "${userId}"]` };
      const res = await call(
        "PATCH",
        `/Groups/${pairs.groupIds[pair.group]}`,
        JSON.stringify({ schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], Operations: [operation] }),
      );
      if (res.status === 204) answered[op]++;
      return res;
    };

    const load = os.loadavg();
    console.log(
      `\n[${code.label}] SCIM server throughput, workers ${workersOn ? "ON: the reconciler and the mirror worker run against an emulator (as the service runs)" : "OFF: inbound alone"}\n` +
        `${concurrency} concurrent keep-alive clients, ${seconds}s per scenario, ${seedUsers} users, service in a child process, embedded PostgreSQL (fsync on)`,
    );
    // Figures on a shared machine mean little without the load they were measured under.
    console.log(
      `machine: ${os.cpus().length} cores, load average ${load.map((l) => l.toFixed(1)).join(" ")} before measuring`,
    );
    let created = 0;
    const only = new Set(values.only!.split(","));
    const results: Result[] = [];
    const senders = new Map<string, (i: number) => Promise<{ status: number }>>();
    const expectedStatus = new Map<string, number>();
    const stocks = new Map<string, Stock>();
    const run = async (
      key: string,
      name: string,
      kind: Result["kind"],
      expected: number,
      send: (i: number) => Promise<{ status: number }>,
      stock?: Stock,
    ) => {
      senders.set(name, send);
      expectedStatus.set(name, expected);
      if (stock) stocks.set(name, stock);
      const profileFile =
        values.profile && path.resolve(values.profile, `${code.label.split(" ")[0]}-${seedUsers}-${key}.cpuprofile`);
      if (profileFile) await child.control("profile-start");
      const result = await scenario(serverCpu, key, name, kind, seconds, concurrency, expected, send, stock);
      if (profileFile) {
        await child.control(`profile-stop ${profileFile}`);
        console.log(
          `profile of ${name} (${code.label}, ${seedUsers} users): ${profileFile}\n${summariseProfile(JSON.parse(readFileSync(profileFile, "utf8")) as CpuProfile, result.requests)}`,
        );
      }
      results.push(result);
    };
    const userPatchOp = (i: number) => ({
      schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
      Operations: [{ op: "replace", path: "displayName", value: `Bench User ${i}` }],
    });
    if (only.has("get")) {
      await run("get", "GET /Users?filter=userName eq", "read", 200, (i) =>
        call("GET", `/Users?filter=${encodeURIComponent(`userName eq "${userNames[(i * 7919) % userNames.length]}"`)}`),
      );
    }
    if (only.has("post")) {
      await run("post", "POST /Users", "write", 201, () =>
        call("POST", "/Users", JSON.stringify(benchUser(`new${created++}@example.com`))),
      );
    }
    if (only.has("put")) {
      await run("put", "PUT /Users/{id}", "write", 200, (i) => {
        const n = (i * 7919) % userIds.length;
        return call(
          "PUT",
          `/Users/${userIds[n]}`,
          JSON.stringify({ ...benchUser(userNames[n]!), displayName: `Bench User ${i}` }),
        );
      });
    }
    if (only.has("userpatch")) {
      await run("userpatch", "PATCH /Users/{id} replace", "write", 204, (i) =>
        call("PATCH", `/Users/${userIds[(i * 7919) % userIds.length]}`, JSON.stringify(userPatchOp(i))),
      );
    }
    if (only.has("patch")) {
      // Each request takes the next pair: an add never repeats one (a repeat changes nothing and marks
      // nobody), a remove takes one that is a member.
      await run(
        "patch-add",
        "PATCH /Groups/{id} add member",
        "write",
        204,
        () => memberPatch("add", pairs.toAdd.next()),
        pairs.toAdd,
      );
      await run(
        "patch-remove",
        "PATCH /Groups/{id} remove member",
        "write",
        204,
        () => memberPatch("remove", pairs.toRemove.next()),
        pairs.toRemove,
      );
    }
    // Saturated, 32 clients that never wait measure the most the server can take; their latency is
    // then mostly queueing (Little's law: 32 in flight ÷ the rate). The latency target is about
    // serving the target rate, so each scenario is measured again at exactly that rate (open loop,
    // at most 32 in flight).
    const paced = new Map<string, Result>();
    for (const r of results) {
      const send = senders.get(r.name)!;
      // The paced run sends exactly rate × seconds requests: their pairs are made first.
      await stocks.get(r.name)?.prepare(Math.round(TARGETS[r.kind] * seconds));
      paced.set(
        r.name,
        await pacedScenario(
          r.key,
          r.name,
          r.kind,
          seconds,
          concurrency,
          TARGETS[r.kind],
          expectedStatus.get(r.name)!,
          send,
        ),
      );
    }
    if (only.has("patch")) {
      // Every answered PATCH must have changed a membership: the groups hold exactly what they imply.
      let held = 0;
      for (const id of pairs.groupIds)
        held += ((JSON.parse((await call("GET", `/Groups/${id}`)).text) as { members?: unknown[] }).members ?? [])
          .length;
      const expected = pairs.addedInBulk + answered.add - answered.remove;
      console.log(
        `memberships: ${held} held, ${expected} expected from ${answered.add} adds and ${answered.remove} removes answered 204 ${held === expected ? "(each a real change)" : "MISMATCH: some PATCHes changed nothing"}`,
      );
      if (held !== expected) process.exitCode = 1;
    }
    const loadedRssMb = rssMbOf(pid);
    await child.control("gc");
    const rssMb = rssMbOf(pid);
    for (const r of results) {
      const goal = TARGETS[r.kind];
      const atGoal = paced.get(r.name)!;
      const meets = r.perSecond >= goal && r.errors === 0 && atGoal.p99 < TARGETS.p99Ms && atGoal.errors === 0;
      console.log(
        `${r.name.padEnd(32)} saturated ${r.perSecond.toFixed(0).padStart(5)} req/s (p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms)  ` +
          `at ${goal}/s: p50 ${atGoal.p50.toFixed(1)} ms, p99 ${atGoal.p99.toFixed(1)} ms  errors ${r.errors + atGoal.errors}  ` +
          `${meets ? "meets" : "BELOW"} target ≥ ${goal}/s with p99 < ${TARGETS.p99Ms} ms (×${(r.perSecond / goal).toFixed(2)})`,
      );
    }
    // On a shared machine req/s depends on the neighbours; CPU per request does not, so it also
    // gives the rate two dedicated cores would sustain (service + PostgreSQL + this load generator).
    for (const r of results) {
      if (Number.isNaN(r.serverCpuMs)) {
        if (CPU_TARGETS_MS[r.key] !== undefined)
          console.log(`${r.name.padEnd(32)} CPU per request: not measured (no /proc), so its target is not met`);
        continue;
      }
      const capacity = (os.cpus().length * 1000) / (r.serverCpuMs + r.postgresCpuMs + r.clientCpuMs);
      const target = CPU_TARGETS_MS[r.key];
      console.log(
        `${r.name.padEnd(32)} CPU per request: service ${r.serverCpuMs.toFixed(3)} ms${target === undefined ? "" : ` (target ≤ ${target})`}, PostgreSQL ${r.postgresCpuMs.toFixed(3)} ms, load generator ${r.clientCpuMs.toFixed(3)} ms → ` +
          `~${capacity.toFixed(0)} req/s on ${os.cpus().length} dedicated cores`,
      );
    }
    console.log(
      `service RSS after the bench: ${mbOf(rssMb)} after a full GC, ${mbOf(loadedRssMb)} as the load ended (target < ${TARGETS.rssMb} MB)`,
    );
    return {
      code: code.label.split(" ")[0]!,
      users: seedUsers,
      workers: workersOn,
      results,
      paced,
      rssMb,
      loadedRssMb,
      load,
    };
  } finally {
    client.close();
    await child.stop();
  }
}

function meetsAll(run: Run): boolean {
  return (
    (run.rssMb === undefined || run.rssMb < TARGETS.rssMb) &&
    run.results.every((r) => {
      const atGoal = run.paced.get(r.name)!;
      const cpuTarget = CPU_TARGETS_MS[r.key];
      return (
        r.errors === 0 &&
        atGoal.errors === 0 &&
        atGoal.p99 < TARGETS.p99Ms &&
        r.perSecond >= TARGETS[r.kind] &&
        // An unmeasured CPU figure (NaN: no /proc) cannot meet its target.
        (cpuTarget === undefined || r.serverCpuMs <= cpuTarget)
      );
    })
  );
}

/** One table: the service's CPU per request of each scenario, old beside new, with the targets. */
function printSummary(runs: Run[], codes: Code[]): void {
  console.log(
    `\nSummary (load average now ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")} on ${os.cpus().length} cores; each line's load before measuring is in its header above)`,
  );
  const labels = codes.map((c) => c.label.split(" ")[0]!);
  const head = [
    "users",
    "workers",
    "scenario",
    ...labels.flatMap((l) => [`${l} CPU ms`, `${l} p99@rate`]),
    "target CPU",
    "target p99",
  ];
  const rows: string[][] = [];
  const byKey = new Map<string, Map<string, { r: Result; paced: Result }>>();
  for (const run of runs) {
    for (const r of run.results) {
      const key = `${run.users}|${run.workers ? "on" : "off"}|${r.name}|${r.key}`;
      if (!byKey.has(key)) byKey.set(key, new Map());
      byKey.get(key)!.set(run.code, { r, paced: run.paced.get(r.name)! });
    }
  }
  for (const [key, byCode] of byKey) {
    const [users, workers, name, scenarioKey] = key.split("|");
    const cells = labels.flatMap((l) => {
      const m = byCode.get(l);
      return m ? [m.r.serverCpuMs.toFixed(3), `${m.paced.p99.toFixed(1)} ms`] : ["-", "-"];
    });
    const cpuTarget = CPU_TARGETS_MS[scenarioKey!];
    rows.push([
      users!,
      workers!,
      name!,
      ...cells,
      cpuTarget === undefined ? "-" : `≤ ${cpuTarget}`,
      `< ${TARGETS.p99Ms} ms`,
    ]);
  }
  for (const run of runs)
    rows.push([
      String(run.users),
      run.workers ? "on" : "off",
      `RSS after (${run.code})`,
      ...labels.flatMap((l) =>
        l === run.code ? [`${mbOf(run.rssMb)} (${mbOf(run.loadedRssMb)} loaded)`, ""] : ["", ""],
      ),
      `< ${TARGETS.rssMb} MB`,
      "",
    ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  console.log(line(head));
  console.log(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`);
  for (const r of rows) console.log(line(r));
}

/** Resident set size of a process, from /proc, in MB. */
function mbOf(mb: number | undefined): string {
  return mb === undefined ? "n/a" : `${mb.toFixed(0)} MB`;
}

function rssMbOf(pid: number): number | undefined {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kb === undefined ? undefined : Number(kb) / 1024;
  } catch {
    return undefined;
  }
}

type CpuProfileNode = {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
};
type CpuProfile = {
  nodes: CpuProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
};

/**
 * Top frames of a .cpuprofile: self time by function, inclusive time by function (each sample
 * counted once per function however deep the recursion) and self time by package; per request
 * when `requests` is given.
 */
function summariseProfile(profile: CpuProfile, requests?: number, top = 25): string {
  const parent = new Map<number, number>();
  const byId = new Map<number, CpuProfileNode>();
  for (const n of profile.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const repo = path.resolve(HERE, "..");
  const where = (url: string) => {
    const file = url.replace(/^file:\/\//, "");
    const nm = file.lastIndexOf("node_modules/");
    if (nm >= 0) return file.slice(nm + "node_modules/".length);
    return file.startsWith(repo) ? file.slice(repo.length + 1) : file.replace(/^.*\/scim-bench-base-[^/]+\//, "");
  };
  const nameOf = (n: CpuProfileNode) =>
    `${n.callFrame.functionName || "(anonymous)"} ${where(n.callFrame.url) || "(native)"}${n.callFrame.url ? `:${n.callFrame.lineNumber + 1}` : ""}`;
  const packageOf = (n: CpuProfileNode) => {
    const url = n.callFrame.url;
    if (!url) return n.callFrame.functionName.startsWith("(") ? n.callFrame.functionName : "(native)";
    const w = where(url);
    if (url.includes("node_modules/")) return w.startsWith("@") ? w.split("/").slice(0, 2).join("/") : w.split("/")[0]!;
    if (url.startsWith("node:")) return "node:internal";
    return w.split("/").slice(0, 2).join("/");
  };
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const packages = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = (profile.timeDeltas[i] ?? 0) / 1000; // µs → ms
    const node = byId.get(id)!;
    if (node.callFrame.functionName === "(idle)") return;
    total += dt;
    self.set(nameOf(node), (self.get(nameOf(node)) ?? 0) + dt);
    packages.set(packageOf(node), (packages.get(packageOf(node)) ?? 0) + dt);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const name = nameOf(byId.get(at)!);
      if (seen.has(name)) continue;
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + dt);
    }
  });
  const per = (ms: number) =>
    requests ? `${((ms * 1000) / requests).toFixed(1).padStart(6)} µs/req` : `${ms.toFixed(0).padStart(6)} ms`;
  const pct = (ms: number) => `${((100 * ms) / total).toFixed(1).padStart(5)}%`;
  const list = (title: string, m: Map<string, number>, skip: (k: string) => boolean = () => false) =>
    `  ${title}\n${[...m]
      .filter(([k]) => !skip(k))
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, ms]) => `    ${pct(ms)} ${per(ms)}  ${k}`)
      .join("\n")}`;
  const wrappers = (k: string) => /^\((root|program|garbage collector)\)|^\(anonymous\) \(native\)/.test(k);
  return [
    `  busy ${total.toFixed(0)} ms sampled${requests ? ` over ${requests} requests (${((total * 1000) / requests).toFixed(1)} µs/req)` : ""}`,
    list("self time by package/area", packages),
    list("self time by function", self),
    list("inclusive time by function", inclusive, wrappers),
  ].join("\n");
}

type Result = {
  key: string;
  name: string;
  kind: "read" | "write";
  requests: number;
  perSecond: number;
  p50: number;
  p99: number;
  errors: number;
  serverCpuMs: number;
  postgresCpuMs: number;
  clientCpuMs: number;
};
type CpuMeter = () => [service: number, postgres: number] | undefined;

async function inParallel(count: number, concurrency: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

async function scenario(
  serverCpu: CpuMeter,
  key: string,
  name: string,
  kind: Result["kind"],
  seconds: number,
  concurrency: number,
  expected: number,
  send: (i: number) => Promise<{ status: number }>,
  stock?: Stock,
): Promise<Result> {
  // Whether a request has its input (a scenario without a stock always has). Checked just before
  // each send, which takes its input synchronously: no two clients can take the last one.
  const hasInput = () => !stock || stock.left() > 0;
  // A short warm-up so the JIT and the connection pool are ready before timing.
  await stock?.prepare(WARM_UP_PAIRS);
  const warmStarted = performance.now();
  const warmUntil = warmStarted + 500;
  let counter = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < warmUntil && hasInput()) await send(counter++);
    }),
  );
  let rate = counter / ((performance.now() - warmStarted) / 1000);
  const latencies: number[] = [];
  let errors = 0;
  let elapsedMs = 0;
  const cpu = { service: 0, postgres: 0, client: 0, measured: true };
  let stretches = 0;
  // One stretch, unless the stock is used up before the time is: then another for the time left,
  // its stock made first from the rate just seen (outside the measured time and CPU).
  while (elapsedMs < seconds * 1000) {
    const leftMs = seconds * 1000 - elapsedMs;
    await stock?.prepare(Math.ceil(((rate * leftMs) / 1000) * STOCK_MARGIN) + concurrency);
    const sentBefore = latencies.length;
    const serverBefore = serverCpu();
    const clientBefore = process.cpuUsage();
    const started = performance.now();
    const until = started + leftMs;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (performance.now() < until && hasInput()) {
          const t0 = performance.now();
          const res = await send(counter++);
          latencies.push(performance.now() - t0);
          if (res.status !== expected) errors += 1;
        }
      }),
    );
    const stretchMs = performance.now() - started;
    const serverAfter = serverCpu();
    const client = process.cpuUsage(clientBefore);
    if (serverBefore && serverAfter) {
      cpu.service += serverAfter[0] - serverBefore[0];
      cpu.postgres += serverAfter[1] - serverBefore[1];
    } else cpu.measured = false;
    cpu.client += (client.user + client.system) / 1000;
    elapsedMs += stretchMs;
    rate = (latencies.length - sentBefore) / (stretchMs / 1000);
    stretches++;
  }
  if (stretches > 1)
    console.log(
      `${name}: measured in ${stretches} stretches, its pairs made again between them (faster than foreseen)`,
    );
  const perRequest = (ms: number) => (cpu.measured ? ms / latencies.length : NaN);
  return resultOf({ key, name, kind }, latencies, elapsedMs / 1000, errors, {
    serverCpuMs: perRequest(cpu.service),
    postgresCpuMs: perRequest(cpu.postgres),
    clientCpuMs: cpu.client / latencies.length,
  });
}

/** A scenario's row: throughput and percentiles of its latencies (sorted here), with its CPU figures. */
function resultOf(
  scenario: Pick<Result, "key" | "name" | "kind">,
  latencies: number[],
  elapsedSeconds: number,
  errors: number,
  cpu: Pick<Result, "serverCpuMs" | "postgresCpuMs" | "clientCpuMs">,
): Result {
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return {
    ...scenario,
    requests: latencies.length,
    perSecond: latencies.length / elapsedSeconds,
    p50: at(0.5),
    p99: at(0.99),
    errors,
    ...cpu,
  };
}

/** Requests started at a fixed rate (open loop), at most `concurrency` in flight; latency from the scheduled start. */
async function pacedScenario(
  key: string,
  name: string,
  kind: Result["kind"],
  seconds: number,
  concurrency: number,
  rate: number,
  expected: number,
  send: (i: number) => Promise<{ status: number }>,
): Promise<Result> {
  const latencies: number[] = [];
  let errors = 0;
  let inFlight = 0;
  const total = Math.round(rate * seconds);
  const started = performance.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    while (inFlight >= concurrency) await new Promise((r) => setImmediate(r));
    inFlight++;
    pending.push(
      send(1_000_000 + i).then(
        (res) => {
          latencies.push(performance.now() - due); // counts time spent waiting to be sent, so a slow server is not excused
          if (res.status !== expected) errors++;
          inFlight--;
        },
        () => {
          errors++;
          inFlight--;
        },
      ),
    );
  }
  await Promise.all(pending);
  const elapsed = (performance.now() - started) / 1000;
  return resultOf({ key, name, kind }, latencies, elapsed, errors, {
    serverCpuMs: NaN,
    postgresCpuMs: NaN,
    clientCpuMs: NaN,
  });
}

async function childService(
  root: string,
  databaseUrl: string,
  childEnv: Record<string, string>,
): Promise<{ url: string; pid: number; control: (line: string) => Promise<void>; stop: () => Promise<void> }> {
  // This file's --serve mode starts the service of `root` (this tree, or a baseline's).
  const child: ChildProcess = spawn(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url), "--serve", databaseUrl, "--root", root],
    {
      stdio: ["pipe", "pipe", "inherit"],
      // --auth access: the token outlives the bench (a day) so no request meets its expiry.
      env: {
        ...process.env,
        ...childEnv,
        LOG_LEVEL: "warn",
        NODE_ENV: "production",
        OAUTH_ACCESS_TOKEN_MINUTES: "1440",
      },
    },
  );
  const lines = createInterface({ input: child.stdout! });
  const waiting: ((line: string) => void)[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    lines.on("line", (line) => {
      if (line.startsWith("token ")) HEADERS.authorization = `Bearer ${line.slice(6).trim()}`;
      else if (line.startsWith("http://")) resolve(line.trim());
      else waiting.shift()?.(line);
    });
    child.once("exit", (code) => reject(new Error(`service child exited early (${code})`)));
  });
  return {
    url,
    pid: child.pid!,
    control: (line) =>
      new Promise<void>((resolve, reject) => {
        waiting.push((answer) => (answer === "ok" ? resolve() : reject(new Error(`service child: ${answer}`))));
        child.stdin!.write(`${line}\n`);
      }),
    stop: () =>
      new Promise<void>((resolve) => {
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

/** The embedded PostgreSQL postmaster and its backends. */
function postgresPids(dataDir: string): number[] {
  try {
    const postmaster = Number(readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
    const children = readdirSync("/proc")
      .filter((name) => /^\d+$/.test(name))
      .filter((name) => {
        try {
          const stat = readFileSync(`/proc/${name}/stat`, "utf8");
          return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === postmaster;
        } catch {
          return false;
        }
      })
      .map(Number);
    return [postmaster, ...children];
  } catch {
    return [];
  }
}

/** Every (group, user) pair once, deterministically shuffled. */
function shuffledPairs(groups: number, users: number): Pair[] {
  const pairs: Pair[] = [];
  for (let u = 0; u < users; u++) for (let g = 0; g < groups; g++) pairs.push({ group: g, user: u });
  let seed = 7;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  for (let i = pairs.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [pairs[i], pairs[j]] = [pairs[j]!, pairs[i]!];
  }
  return pairs;
}
