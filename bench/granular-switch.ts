/**
 * bench/granular-switch: what the move to the platform's granular permissions costs in platform
 * calls, counted on the emulator's own journal and in the connector's budget ledger (which must
 * agree: a call the ledger missed is one the budget never saw).
 *
 *   npm run bench:granular [-- --users 20000 --groups 20]
 *
 * N users in G groups are provisioned under a legacy mapping (embedded PostgreSQL, the emulator as
 * the platform, the real SCIM API into the connector); the emulator is then migrated to granular
 * (legacy accepted), as the platform migrates a company. Then:
 *   1. the switch: the mapping is replaced by its `mapping migrate` translation. Goal: 0 calls (a
 *      naive re-send is one PUT per account, N).
 *   2. a one-rule change: one group's rule gains a permission. Goal: exactly the accounts of that
 *      group's members, computed from the bench's own model of who is in which group.
 * After each step the work must be done, not put off: the reconcile queue empty (nothing parked,
 * deferred or due), and every account on the emulator holding what the bench's model says the
 * mapping grants (bench/support/granularWorld.ts). Exits non-zero when a goal is missed.
 */
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { loadEnv } from "../src/config/env.js";
import { startEmbeddedPostgres } from "../src/db/embedded.js";
import { startEmulator } from "../src/emulator/index.js";
import { setLogLevel } from "../src/logging/logger.js";
import { migrateMapping } from "../src/mapping/migrate.js";
import { startService } from "../src/service.js";
import { keepAliveClient } from "./support/httpClient.js";
import { benchUser } from "./support/scimUser.js";
import { accountDifferences, groupsOf, legacyMapping, userNameOf, type Step } from "./support/granularWorld.js";
import { ledgerDebits } from "../test/support/emulator.js";
import { waitForQueueIdle } from "../test/support/queue.js";

const { values } = parseArgs({
  options: {
    users: { type: "string", default: "20000" },
    groups: { type: "string", default: "20" },
    concurrency: { type: "string", default: "16" },
  },
});
const USERS = Number(values.users);
const GROUPS = Number(values.groups);
const CONCURRENCY = Number(values.concurrency);
const TOKEN = "bench-granular-token-0123456789abcdef";
setLogLevel("warn");

const world = { users: USERS, groups: GROUPS };
const GRANULAR = { model: "granular" } as const;

const dir = await mkdtemp(path.join(os.tmpdir(), "scim-bench-granular-"));
await chmod(dir, 0o755);
const mappingFile = path.join(dir, "mapping.yaml");
await writeFile(mappingFile, legacyMapping(world));
const pg = await startEmbeddedPostgres(path.join(dir, "pg"), { persistent: false, throwaway: true });
const emulator = await startEmulator({ scimDailyLimit: 1_000_000_000, scimJournal: true, permissions: "legacy" });
const service = await startService({
  env: loadEnv({
    PORT: "0",
    HOST: "127.0.0.1",
    SCIM_TOKEN: TOKEN,
    MAPPING_FILE: mappingFile,
    PLATFORM_SCIM_DAILY_BUDGET: "1000000000",
    RECONCILE_WORKERS: "4",
    RECONCILE_POLL_MS: "100",
    RECONCILE_SETTLE_MS: "0",
    RESYNC_CRON: "off",
    DATABASE_POOL_SIZE: "20",
    LOG_LEVEL: "warn",
  }),
  databaseUrl: pg.url,
  platform: { url: emulator.url, scimToken: "dev-scim-token", apiKey: undefined, requestOrigin: "bench" },
});
const journal = emulator.state.scimJournal!;
const http = keepAliveClient(service.url, CONCURRENCY);
const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/scim+json" };
let failed = false;

/**
 * Waits until nothing is due, then checks that the step's work was done rather than put off: the
 * queue empty (a parked or deferred row is work not done), every account as the model wants it at
 * `step`, and the emulator's journal and the ledger moved alike since `mark`. Misses are printed.
 */
async function settled(label: string, step: Step, mark: { journal: number; ledger: number }): Promise<boolean> {
  const started = Date.now();
  await waitForQueueIdle(service.db, { timeoutMs: 30 * 60_000 });
  console.log(`  ${label}: nothing due after ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const [left] = (await service.db.query(
    `SELECT count(*)::int AS rows, count(*) FILTER (WHERE parked_at IS NOT NULL)::int AS parked,
            count(*) FILTER (WHERE parked_at IS NULL AND not_before > now())::int AS deferred FROM reconcile_queue`,
  )) as { rows: number; parked: number; deferred: number }[];
  const differences = accountDifferences(world, emulator.state.dashboardUsers.list(), step);
  const calls = { emulator: journal.length - mark.journal, ledger: (await ledgerDebits(service.db)) - mark.ledger };
  const ok = left!.rows === 0 && differences.length === 0 && calls.emulator === calls.ledger;
  console.log(
    `  ${label}: queue ${left!.rows} rows (${left!.parked} parked, ${left!.deferred} deferred; goal 0); accounts unlike the mapping: ${differences.length} (goal 0); calls: emulator ${calls.emulator}, ledger ${calls.ledger}   ${ok ? "OK" : "MISSED"}`,
  );
  for (const d of differences.slice(0, 3)) console.log(`    ${d}`);
  return ok;
}

const marks = async () => ({ journal: journal.length, ledger: await ledgerDebits(service.db) });

try {
  console.log(`provisioning ${USERS.toLocaleString()} users in ${GROUPS} groups under a legacy mapping…`);
  const provisioning = await marks();
  const ids: string[] = new Array(USERS);
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < USERS; i = next++) {
        const res = await http.call("POST", "/scim/v2/Users", headers, JSON.stringify(benchUser(userNameOf(i))));
        if (res.status !== 201) throw new Error(`create u${i}: ${res.status} ${res.text}`);
        ids[i] = (JSON.parse(res.text) as { id: string }).id;
      }
    }),
  );
  const members = Array.from({ length: GROUPS }, () => [] as string[]);
  ids.forEach((id, i) => groupsOf(world, i).forEach((k) => members[k]!.push(id)));
  for (let k = 0; k < GROUPS; k++) {
    const res = await http.call(
      "POST",
      "/scim/v2/Groups",
      headers,
      JSON.stringify({
        schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
        displayName: `Group ${k}`,
        members: members[k]!.map((value) => ({ value })),
      }),
    );
    if (res.status !== 201) throw new Error(`group ${k}: ${res.status} ${res.text}`);
  }
  const provisioned = await settled("legacy provisioning", { model: "legacy" }, provisioning);
  console.log(`  ${emulator.state.dashboardUsers.byId.size.toLocaleString()} accounts on the emulator`);

  // The platform migrates the company (as POST /_emulator/permissions does).
  const migrated = await fetch(`${emulator.url}/_emulator/permissions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "granular", legacy: "accepted" }),
  });
  if (!migrated.ok) throw new Error(`emulator migration: ${migrated.status}`);

  // 1. The switch to the translated mapping.
  const translated = migrateMapping(legacyMapping(world));
  if (translated.outcome !== "migrated") throw new Error(`mapping migrate: ${JSON.stringify(translated)}`);
  await writeFile(mappingFile, translated.text);
  let mark = await marks();
  let started = performance.now();
  await service.mappings.reload(service.db);
  const switched = await settled("switch to granular", GRANULAR, mark);
  const switchCalls = journal.length - mark.journal;
  const switchSeconds = (performance.now() - started) / 1000;

  // 2. A one-rule change: Group 5's rule gains view_push_settings.
  const changedGroup = 5 % GROUPS;
  const expected = ids.filter((_, i) => groupsOf(world, i).includes(changedGroup)).length;
  const changed = translated.text.replace(
    new RegExp(
      `(group: Group ${changedGroup}\\n    workspaces:\\n      - name: Workspace \\d\\n        permissions:\\n)`,
    ),
    "$1          - view_push_settings\n",
  );
  if (changed === translated.text) throw new Error("the one-rule change did not apply to the migrated text");
  await writeFile(mappingFile, changed);
  mark = await marks();
  started = performance.now();
  await service.mappings.reload(service.db);
  const ruleStep = { ...GRANULAR, extra: { group: changedGroup, permission: "view_push_settings" } };
  const ruleDone = await settled("one-rule change", ruleStep, mark);
  const ruleCalls = journal.slice(mark.journal);
  const ruleSeconds = (performance.now() - started) / 1000;
  const puts = ruleCalls.filter((e) => e.method === "PUT").length;

  console.log(
    `\nswitch to the translated mapping: ${switchCalls} calls (goal 0; a naive re-send is ${USERS.toLocaleString()})   ${switchSeconds.toFixed(1)} s   ${switchCalls === 0 && switched ? "OK" : "MISSED"}`,
  );
  console.log(
    `one-rule change (Group ${changedGroup}): ${ruleCalls.length} calls, ${puts} PUTs (goal exactly ${expected}, the group's members)   ${ruleSeconds.toFixed(1)} s   ${ruleCalls.length === expected && puts === expected && ruleDone ? "OK" : "MISSED"}`,
  );
  failed =
    !provisioned || !switched || !ruleDone || switchCalls !== 0 || ruleCalls.length !== expected || puts !== expected;
} finally {
  http.close();
  await service.close();
  await emulator.close();
  await pg.stop();
  await rm(dir, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
