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

const { values } = parseArgs({ options: { users: { type: "string", default: "100000" }, groups: { type: "string", default: "500" } } });
const USERS = Number(values.users);
const GROUPS = Number(values.groups);

const dir = await mkdtemp(path.join(os.tmpdir(), "scim-bench-resync-"));
await chmod(dir, 0o755);
const pg = await startEmbeddedPostgres(path.join(dir, "pg"), { persistent: false, throwaway: true });
try {
  const db = await openDatabase({ url: pg.url, poolSize: 4, applicationName: "scim-connector-bench" });
  await db.migrate();

  // 500 groups: Team-000..Team-499; each user in three teams. The mapping grants workspace
  // permissions per team family, so every user has a different union to compute.
  console.log(`seeding ${USERS.toLocaleString()} users in ${GROUPS} groups…`);
  await db.query(`INSERT INTO idp_groups (display_name, resource) SELECT format('Team-%s', lpad(g::text, 3, '0')), '{}'::jsonb FROM generate_series(0, $1 - 1) g`, [GROUPS]);
  await db.query(
    `INSERT INTO idp_users (user_name, active, given_name, family_name, department, resource)
     SELECT format('user%s@example.com', u), u % 50 <> 0, format('User%s', u), 'Bench', (ARRAY['Finance & Accounting','marketing',NULL])[1 + u % 3], '{}'::jsonb
       FROM generate_series(1, $1) u`,
    [USERS],
  );
  await db.query(
    `INSERT INTO idp_group_members (group_id, user_id)
     SELECT g.id, u.id FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM idp_users) u
       JOIN (SELECT id, row_number() OVER (ORDER BY display_name) - 1 AS k FROM idp_groups) g
         ON g.k IN (u.n % $1, (u.n * 7) % $1, (u.n * 13) % $1)
     ON CONFLICT DO NOTHING`,
    [GROUPS],
  );
  await db.query(`ANALYZE`);

  const mappingFile = path.join(dir, "mapping.yaml");
  const rules = Array.from({ length: 20 }, (_, k) => `
  - groupPattern: "^Team-${String(k).padStart(2, "0")}"
    ${k % 4 === 0 ? "department: marketing" : ""}
    workspaces:
      - name: Workspace ${k % 5}
        permissions: [basic_access${k % 2 ? ", export_user_data" : ""}]
        teams:
          - name: Team ${k}
            permissions: [basic_access]`).join("");
  await writeFile(mappingFile, `department:\n  default: engineering\n  translate: { "Finance & Accounting": finance }\nrules:${rules}\n  - group: Team-499\n    companyPermissions: [admin]\n`);
  const mappings = await MappingStore.load(mappingFile);

  const deps = { db, clock: systemClock, mappings, policies: { onEmailChange: "hold" as const } };
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
  console.log(`\nresync phase 1: ${run.usersEvaluated.toLocaleString()} users evaluated, ${run.usersQueued.toLocaleString()} queued (${JSON.stringify(run.planSummary)})`);
  console.log(`time        ${seconds.toFixed(2)} s   (target < 10 s)   ${seconds < 10 ? "OK" : "MISSED"}`);
  console.log(`peak RSS    ${mb(peakRss)} MB   (target < 300 MB; ${mb(baseRss)} MB before the run)   ${peakRss < 300 * 1024 * 1024 ? "OK" : "MISSED"}`);
  console.log(`throughput  ${Math.round(run.usersEvaluated / seconds).toLocaleString()} users/s`);
  await db.close();
} finally {
  await pg.stop();
  await rm(dir, { recursive: true, force: true });
}
