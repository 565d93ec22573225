/**
 * bench/resync-plan: phase 1 of a full resync (re-derive every user, queue the differences) for
 * 100,000 users in 500 groups on an embedded PostgreSQL. Prints the time and the peak memory of
 * this process against the targets (under 10 s, under 300 MB RSS on a 2-core machine).
 *
 *   npm run bench:resync [-- --users 100000 --groups 500]
 */
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { systemClock } from "../src/clock.js";
import { openDatabase } from "../src/db/dataSource.js";
import { startEmbeddedPostgres } from "../src/db/embedded.js";
import { createRun, runPlanPhase } from "../src/jobs/resync.js";
import { MappingStore } from "../src/mapping/store.js";
import { DesiredAccess } from "../src/mapping/desiredAccess.js";
import { seedTeamsWorld, TEAMS_MAPPING } from "./support/teamsWorld.js";

const { values } = parseArgs({
  options: { users: { type: "string", default: "100000" }, groups: { type: "string", default: "500" } },
});
const USERS = Number(values.users);
const GROUPS = Number(values.groups);

const dir = await mkdtemp(path.join(os.tmpdir(), "scim-bench-resync-"));
await chmod(dir, 0o755);
const pg = await startEmbeddedPostgres(path.join(dir, "pg"), { persistent: false, throwaway: true });
try {
  const db = await openDatabase({ url: pg.url, poolSize: 4, applicationName: "scim-connector-bench" });
  await db.migrate();

  // Each user in three of the 500 teams; every 50th user inactive.
  console.log(`seeding ${USERS.toLocaleString()} users in ${GROUPS} groups…`);
  await seedTeamsWorld(db, USERS, GROUPS, { inactiveEvery: 50 });
  await db.query(`ANALYZE`);

  const mappingFile = path.join(dir, "mapping.yaml");
  await writeFile(mappingFile, TEAMS_MAPPING);
  const mappings = await MappingStore.load(mappingFile);

  const deps = {
    db,
    clock: systemClock,
    desired: new DesiredAccess(mappings),
    policies: { onEmailChange: "hold" as const },
  };
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);
  const baseRss = process.memoryUsage().rss;

  const started = performance.now();
  const runId = await createRun(deps, { dryRun: false, verify: false, trigger: "cli", actor: "bench" });
  const run = await runPlanPhase(deps, runId);
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  peakRss = Math.max(peakRss, process.memoryUsage().rss);

  const mb = (n: number) => Math.round(n / 1024 / 1024);
  console.log(
    `\nresync phase 1: ${run.usersEvaluated.toLocaleString()} users evaluated, ${run.usersQueued.toLocaleString()} queued (${JSON.stringify(run.planSummary)})`,
  );
  console.log(`time        ${seconds.toFixed(2)} s   (target < 10 s)   ${seconds < 10 ? "OK" : "MISSED"}`);
  console.log(
    `peak RSS    ${mb(peakRss)} MB   (target < 300 MB; ${mb(baseRss)} MB before the run)   ${peakRss < 300 * 1024 * 1024 ? "OK" : "MISSED"}`,
  );
  console.log(`throughput  ${Math.round(run.usersEvaluated / seconds).toLocaleString()} users/s`);
  await db.close();
} finally {
  await pg.stop();
  await rm(dir, { recursive: true, force: true });
}
