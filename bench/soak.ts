/**
 * Soak: the connector (a child process, as in production) against an embedded PostgreSQL and the
 * in-process emulator, under a steady rate of mixed IdP traffic for N minutes while it reconciles
 * and the mirror sync pushes what a simulated ETL upserts. Prints throughput, latency (p50/p99),
 * every non-2xx answer the IdP saw (retried ones included) by status, and the connector's RSS
 * after boot, after warm-up and at the end (target: growth under 10%, comparing the mean of the
 * first and the last quarter of the samples taken after warm-up),
 * then checks that the platform ended up with what the IdP asked for.
 *
 *   npm run bench:soak [-- --minutes 10 --rate 10]
 *
 * The mix (per IdP request): 25% unchanged full PUT (Okta's re-send, free), 15% PUT with a name
 * change, 15% user POST, 25% group membership PATCH, 10% deactivation or reactivation, 10% filter
 * GET. About 4 in 10 need a platform call, so the default rate stays inside the platform's 5,000
 * SCIM calls a day for a 10-minute run.
 */
import { readFileSync } from "node:fs";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { parseArgs } from "node:util";
import { openDatabase } from "../src/db/dataSource.js";
import { startEmbeddedPostgres } from "../src/db/embedded.js";
import { startEmulator } from "../src/emulator/index.js";
import { spawnConnector } from "../test/support/connectorProcess.js";
import { emulatorCounts, ledgerDebits } from "../test/support/emulator.js";
import {
  EtlWriter,
  IdpModel,
  ResilientIdp,
  SCIM_USER_SCHEMA,
  waitForQuiet,
  worldProblems,
} from "../test/support/faultWorld.js";
import { TEST_MAPPING } from "../test/support/mapping.js";

const TOKEN = "soak-idp-token-0123456789abcdefgh";
const BUDGET = 5_000;

const { values } = parseArgs({
  options: {
    minutes: { type: "string", default: "10" },
    rate: { type: "string", default: "10" },
    users: { type: "string", default: "300" },
  },
});
const minutes = Number(values.minutes);
const rate = Number(values.rate);
const seedUsers = Number(values.users);
if (!(minutes > 0 && minutes <= 24 * 60) || !(rate > 0 && rate <= 500) || !(seedUsers >= 10)) {
  console.error("usage: npm run bench:soak [-- --minutes 10 --rate 10 --users 300]");
  process.exit(2);
}

const rssMb = (pid: number) => {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
  return kb / 1024;
};
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;

const dir = await mkdtemp(path.join(os.tmpdir(), "scim-soak-"));
await chmod(dir, 0o755);
const pg = await startEmbeddedPostgres(path.join(dir, "data"), { persistent: false });
const emulator = await startEmulator();
await writeFile(path.join(dir, "mapping.yaml"), TEST_MAPPING);
const connector = await spawnConnector({
  DATABASE_URL: pg.url,
  PLATFORM_URL: emulator.url,
  PLATFORM_SCIM_TOKEN: "dev-scim-token",
  PLATFORM_API_KEY: "dev-api-key",
  PLATFORM_REQUEST_ORIGIN: "soak",
  PLATFORM_SCIM_DAILY_BUDGET: String(BUDGET),
  SCIM_TOKEN: TOKEN,
  ADMIN_TOKEN: "soak-admin-token-0123456789abcdef", // required outside the embedded defaults
  MAPPING_FILE: path.join(dir, "mapping.yaml"),
  // The steady stream includes leavers; the breaker would hold them for an admin.
  DEPROVISION_BREAKER_MIN: "100000",
  LOG_LEVEL: "warn",
});
const pid = connector.child.pid!;
const db = await openDatabase({ url: pg.url, poolSize: 3, applicationName: "scim-connector-bench" });

try {
  await run();
} finally {
  await connector.kill("SIGTERM");
  await db.close();
  await emulator.close();
  await pg.stop();
  await rm(dir, { recursive: true, force: true });
}

async function run(): Promise<void> {
  const rssBoot = rssMb(pid);
  const idp = new ResilientIdp(() => connector.url, TOKEN);
  const model = new IdpModel();
  const names: string[] = [];
  const emails = Array.from({ length: 5_000 }, (_, i) => `soak${i}@example.com`);
  const etl = new EtlWriter(db, emails, 50);

  // Seed: users in Marketing, a first ETL load, and everything settled.
  for (const g of ["Marketing", "Analysts-EU"]) model.groupIds.set(g, await idp.createGroup(g, []));
  const seeded: string[] = [];
  for (let i = 0; i < seedUsers; i++) {
    const userName = `soak-u${i}@example.com`;
    const id = await idp.createUser(userName);
    model.users.set(userName, { id, active: true, groups: new Set(["Marketing"]) });
    names.push(userName);
    seeded.push(id);
  }
  for (let i = 0; i < seeded.length; i += 100)
    await idp.addMembers(model.groupIds.get("Marketing")!, seeded.slice(i, i + 100));
  for (let i = 0; i < emails.length; i += 1_000) await etl.writeOnce(emails.slice(i, i + 1_000));
  await waitForQuiet(db, 300_000);
  console.log(
    `seeded ${seedUsers} users and ${emails.length} email states; connector RSS ${rssBoot.toFixed(0)} MB after boot, ${rssMb(pid).toFixed(0)} MB after seeding`,
  );

  // The steady load. Requests about one user run in order (a per-user chain); the rest overlap.
  const latencies: number[] = [];
  let skipped = 0; // not sent: 64 requests already in flight
  const answersBefore = new Map(idp.answers);
  let next = seedUsers;
  const chains = new Map<string, Promise<void>>();
  const pickUser = () => names[Math.floor(Math.random() * names.length)]!;
  const timed = async (fn: () => Promise<{ status: number }>) => {
    const t = performance.now();
    // Every answer, retried or not, is counted by status in the IdP client (idp.answers).
    await fn().catch(() => undefined);
    latencies.push(performance.now() - t);
  };
  const fullUser = (userName: string, active: boolean, given: string) => ({
    schemas: [SCIM_USER_SCHEMA],
    userName,
    name: { givenName: given, familyName: "Soak" },
    active,
  });
  async function oneRequest(r: number, userName: string): Promise<void> {
    if (r < 0.15) {
      const userName = `soak-u${next++}@example.com`;
      await timed(async () => {
        const res = await idp.send("POST", "/Users", fullUser(userName, true, userName.split("@")[0]!), 5_000);
        if (res.status === 201) {
          model.users.set(userName, { id: res.body.id, active: true, groups: new Set() });
          names.push(userName);
        }
        return res;
      });
      return;
    }
    const user = model.users.get(userName)!;
    if (r < 0.4)
      await timed(() =>
        idp.send("PUT", `/Users/${user.id}`, fullUser(userName, user.active, userName.split("@")[0]!), 5_000),
      );
    else if (r < 0.55)
      await timed(() =>
        idp.send(
          "PUT",
          `/Users/${user.id}`,
          fullUser(userName, user.active, `n${Math.floor(Math.random() * 1e6)}`),
          5_000,
        ),
      );
    else if (r < 0.8) {
      const group = Math.random() < 0.6 ? "Marketing" : "Analysts-EU";
      const has = user.groups.has(group);
      const op = has
        ? { op: "remove", path: `members[value eq "${user.id}"]` }
        : { op: "add", path: "members", value: [{ value: user.id }] };
      await timed(async () => {
        const res = await idp.send(
          "PATCH",
          `/Groups/${model.groupIds.get(group)}`,
          { schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], Operations: [op] },
          5_000,
        );
        if (res.status < 300) has ? user.groups.delete(group) : user.groups.add(group);
        return res;
      });
    } else if (r < 0.9) {
      await timed(async () => {
        const res = await idp.send(
          "PATCH",
          `/Users/${user.id}`,
          {
            schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
            Operations: [{ op: "replace", value: { active: !user.active } }],
          },
          5_000,
        );
        if (res.status < 300) user.active = !user.active;
        return res;
      });
    } else
      await timed(() =>
        idp.send("GET", `/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}`, undefined, 5_000),
      );
  }

  const durationMs = minutes * 60_000;
  const warmupMs = Math.min(60_000, durationMs * 0.15);
  const started = Date.now();
  let rssWarm = 0;
  const rssTrail: number[] = [];
  /** Every 5 s after warm-up: RSS moves with each garbage collection, so start and end are averages of a quarter of the run each. */
  const rssSamples: number[] = [];
  let sent = 0;
  let inFlight = 0;
  etl.start(500);
  while (Date.now() - started < durationMs) {
    const due = started + (sent * 1000) / rate;
    if (due > Date.now()) await delay(due - Date.now());
    sent++;
    if (inFlight < 64) {
      inFlight++;
      // One request per user at a time: the next about the same user waits for the previous,
      // so the model (what the platform must end up holding) follows the IdP's order.
      const r = Math.random();
      const key = r < 0.15 ? `new${sent}` : pickUser();
      const chain = (chains.get(key) ?? Promise.resolve())
        .then(() => oneRequest(r, key))
        .finally(() => {
          inFlight--;
          if (chains.get(key) === chain) chains.delete(key);
        });
      chains.set(key, chain);
    } else skipped++;
    if (!rssWarm && Date.now() - started >= warmupMs) rssWarm = rssMb(pid);
    if (rssWarm && sent % Math.max(1, Math.round(rate * 5)) === 0) rssSamples.push(rssMb(pid));
    if (sent % Math.max(1, Math.round(rate * 30)) === 0) rssTrail.push(Math.round(rssMb(pid)));
  }
  await Promise.all(chains.values());
  await etl.stop();
  const elapsedS = (Date.now() - started) / 1000;
  const rssEnd = rssMb(pid);

  const drainStart = Date.now();
  let drained = true;
  await waitForQuiet(db, 120_000).catch(() => (drained = false));
  const drainS = (Date.now() - drainStart) / 1000;
  const found = await worldProblems({ emulatorUrl: emulator.url, db, budget: BUDGET, expected: model.expected() });
  const counts = await emulatorCounts(emulator.url);
  const [log] = await db.query(
    `SELECT count(*)::int AS n, count(*) FILTER (WHERE outcome = 'succeeded')::int AS ok FROM reconcile_log`,
  );
  const [pushes] = await db.query(`SELECT count(*)::int AS n FROM mirror_sync.push_log`);
  const sorted = [...latencies].sort((a, b) => a - b);
  // Every answer the IdP saw during the load that was not a 2xx, retried ones included, by status.
  const failures = [...idp.answers]
    .map(([status, n]) => [status, n - (answersBefore.get(status) ?? 0)] as const)
    .filter(([status, n]) => n > 0 && !(status >= 200 && status < 300))
    .sort(([a], [b]) => a - b);
  const failed = failures.reduce((sum, [, n]) => sum + n, 0);
  const answered = [...idp.answers].reduce((sum, [status, n]) => sum + n - (answersBefore.get(status) ?? 0), 0);
  const quarter = Math.max(1, Math.floor(rssSamples.length / 4));
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  const rssStartAvg = mean(rssSamples.slice(0, quarter));
  const rssEndAvg = mean(rssSamples.slice(-quarter));
  const growth = ((rssEndAvg - rssStartAvg) / rssStartAvg) * 100;

  console.log(`\nsoak: ${minutes} min at ${rate} IdP requests/s (mixed), ETL upserting 50 email states every 500 ms`);
  console.log(
    `  IdP requests      ${latencies.length} in ${elapsedS.toFixed(0)} s = ${(latencies.length / elapsedS).toFixed(1)}/s; ${skipped} not sent (64 in flight)`,
  );
  console.log(
    `  non-2xx answers   ${failed} of ${answered} answers (retries included)${failures.length ? `: ${failures.map(([status, n]) => `${status === 0 ? "no answer" : status} ×${n}`).join(", ")}` : ""}`,
  );
  console.log(
    `  latency           p50 ${percentile(sorted, 50).toFixed(1)} ms, p99 ${percentile(sorted, 99).toFixed(1)} ms, max ${(sorted.at(-1) ?? 0).toFixed(1)} ms`,
  );
  console.log(
    `  reconciles        ${log.n} log entries (${log.ok} succeeded); ${counts.scimDaily.used} platform SCIM calls, ${await ledgerDebits(db)} debits of ${BUDGET}`,
  );
  console.log(
    `  mirror            ${etl.writes} ETL row writes, ${pushes.n} push requests logged; drained ${drained ? "" : "NOT "}in ${drainS.toFixed(1)} s after the load`,
  );
  console.log(
    `  connector RSS     boot ${rssBoot.toFixed(0)} MB, after warm-up (${(warmupMs / 1000).toFixed(0)} s) ${rssWarm.toFixed(0)} MB, at the end ${rssEnd.toFixed(0)} MB`,
  );
  console.log(
    `                    mean of the first quarter ${rssStartAvg.toFixed(0)} MB, of the last quarter ${rssEndAvg.toFixed(0)} MB (${rssSamples.length} samples): growth ${growth.toFixed(1)}% (target < 10%)`,
  );
  console.log(`  RSS every 30 s    ${rssTrail.join(" ")} MB`);
  console.log(
    `  end state         ${model.users.size} users; ${found.length ? `PROBLEMS: ${found.slice(0, 5).join("; ")}` : "platform exactly as desired, every email state pushed with its latest value"}`,
  );
  if (found.length || growth >= 10 || !drained) process.exitCode = 1;
}
