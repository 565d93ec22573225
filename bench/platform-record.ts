/**
 * bench/platform-record: what reading the platform's Security Event record costs, counted on the
 * emulator's own counters (GET /_emulator/stats, its SCIM journal), never through the connector's code.
 *
 *   npm run bench:platform-record [-- --scale 0.1]      (or BENCH_SCALE=0.1)
 *
 * Scale 1: 20,000 managed accounts, provisioned through the real SCIM API and reconciler (lifted
 * budgets on both sides). Then, in the emulator's dashboard (POST /_emulator/dashboard), 200 accounts
 * added by hand and 500 managed accounts' permissions changed by a human actor, among sign-ins and
 * failed logins, so that the report (GET /_emulator/security-events.csv, the 10,000 most recent
 * events) holds 10,000 rows: the 700, the last 500 of the connector's own creates, the rest activity.
 * --scale s multiplies the accounts, the 200, the 500 and the own creates kept; the report stays 10,000 rows.
 *
 * The report is posted to the JSON API of a web-only replica (no reconcile worker, no discovery
 * lane), so every platform call made while the import runs is the import's own (goal 0). A worker
 * replica on the same database is then started and runs until the 200 are confirmed and the queue is
 * empty: its calls (goal ≤ 200 + 2 × 500) are counted on the emulator and in the budget ledger, which
 * must agree. Beside it, the alternative: a verifying resync (`resync --verify`'s machinery, run in
 * full), its calls, and whether any of them concerned an account made by hand.
 * Exits non-zero when a goal is missed or a count disagrees.
 */
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { isDeepStrictEqual, parseArgs } from "node:util";
import { systemClock } from "../src/clock.js";
import { loadEnv } from "../src/config/env.js";
import { startEmbeddedPostgres } from "../src/db/embedded.js";
import { getRun } from "../src/db/reconcile/resyncRepository.js";
import { startEmulator } from "../src/emulator/index.js";
import { REPORT_ROWS } from "../src/emulator/security/events.js";
import { createRun, runPlanPhase } from "../src/jobs/resync.js";
import { setLogLevel } from "../src/logging/logger.js";
import { startService, type Service } from "../src/service.js";
import { keepAliveClient } from "./support/httpClient.js";
import { benchUser } from "./support/scimUser.js";

const { values } = parseArgs({
  options: {
    scale: { type: "string", default: process.env.BENCH_SCALE ?? "1" },
    groups: { type: "string", default: "20" },
    concurrency: { type: "string", default: "16" },
  },
});
const SCALE = Number(values.scale);
if (!(SCALE > 0 && SCALE <= 1)) throw new Error(`--scale must be in (0, 1], got ${values.scale}`);
const ACCOUNTS = Math.round(20_000 * SCALE);
const BY_HAND = Math.round(200 * SCALE);
const CHANGED = Math.round(500 * SCALE);
/** The report's rows: the emulator's cap (the platform's 10,000 most recent), at every scale. */
const ROWS = REPORT_ROWS;
/** The connector's own most recent creates left in the report (they must not be flagged). */
const OWN_IN_REPORT = Math.round(500 * SCALE);
const GROUPS = Number(values.groups);
const CONCURRENCY = Number(values.concurrency);
const SCIM_TOKEN = "bench-record-scim-token-0123456789abcdef";
const ADMIN_TOKEN = "bench-record-admin-token-0123456789abcdef";
const HUMAN = "ops-admin@example.com";
const OWN_WRITE_WINDOW_MINUTES = 10;
const TIMEOUT_MS = 15 * 60_000;
setLogLevel("warn");

const userName = (i: number) => `u${i}@example.com`;
const handName = (i: number) => `contractor${i}@partner.example`;
/** User i is in group i % GROUPS; group k grants basic_access in Workspace k % 4. */
function mappingYaml(): string {
  const lines = ["department: { default: engineering }", "rules:"];
  for (let k = 0; k < GROUPS; k++)
    lines.push(
      `  - group: Group ${k}`,
      "    workspaces:",
      `      - name: Workspace ${k % 4}`,
      "        permissions: [basic_access]",
    );
  return `${lines.join("\n")}\n`;
}

const dir = await mkdtemp(path.join(os.tmpdir(), "scim-bench-record-"));
await chmod(dir, 0o755);
const mappingFile = path.join(dir, "mapping.yaml");
await writeFile(mappingFile, mappingYaml());
const pg = await startEmbeddedPostgres(path.join(dir, "pg"), { persistent: false, throwaway: true });
const emulator = await startEmulator({ scimDailyLimit: 1_000_000_000, scimJournal: true, permissions: "legacy" });
const journal = emulator.state.scimJournal!;
const platform = { url: emulator.url, scimToken: "dev-scim-token", apiKey: undefined, requestOrigin: "bench" };
const env = (extra: Record<string, string>) =>
  loadEnv({
    PORT: "0",
    HOST: "127.0.0.1",
    SCIM_TOKEN,
    ADMIN_TOKEN,
    MAPPING_FILE: mappingFile,
    PLATFORM_SCIM_DAILY_BUDGET: "1000000000",
    RECONCILE_WORKERS: "4",
    RECONCILE_POLL_MS: "100",
    RECONCILE_SETTLE_MS: "0",
    RESYNC_CRON: "off",
    DATABASE_POOL_SIZE: "20",
    UNMANAGED_LOOKUPS_PER_DAY: String(Math.max(200, BY_HAND)),
    UNMANAGED_LOOKUP_POLL_MS: "200",
    SECURITY_EVENTS_OWN_WRITE_WINDOW_MINUTES: String(OWN_WRITE_WINDOW_MINUTES),
    LOG_LEVEL: "warn",
    ...extra,
  });
const services: Service[] = [];
const start = async (workers: boolean) => {
  const s = await startService({ env: env({}), databaseUrl: pg.url, platform, workers });
  services.push(s);
  return s;
};
const stop = async (s: Service) => {
  services.splice(services.indexOf(s), 1);
  await s.close();
};
const misses: string[] = [];
const check = (ok: boolean, what: string) => {
  if (!ok) misses.push(what);
  return ok ? "OK" : "MISSED";
};

/** The emulator's own counters: the SCIM daily budget used, and every request it received. */
async function emulatorCalls(): Promise<{ used: number; requests: number }> {
  const stats = (await (await fetch(`${emulator.url}/_emulator/stats`)).json()) as {
    scimDaily: { used: number };
    requests: Record<string, number>;
  };
  return { used: stats.scimDaily.used, requests: Object.values(stats.requests).reduce((a, b) => a + b, 0) };
}
async function ledgerRows(s: Service): Promise<number> {
  return ((await s.db.query(`SELECT count(*)::int AS n FROM budget_debits`)) as { n: number }[])[0]!.n;
}
async function queueState(s: Service) {
  const [row] = (await s.db.query(
    `SELECT count(*)::int AS total, count(*) FILTER (WHERE parked_at IS NOT NULL)::int AS parked,
            count(*) FILTER (WHERE parked_at IS NULL AND not_before > now())::int AS deferred
       FROM reconcile_queue`,
  )) as { total: number; parked: number; deferred: number }[];
  return row!;
}
async function until(label: string, test: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  while (!(await test())) {
    if (Date.now() - started > TIMEOUT_MS) throw new Error(`timed out waiting for ${label}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return (Date.now() - started) / 1000;
}
/** One request per item, `CONCURRENCY` at a time, in the items' order of start. */
async function each<T>(items: T[], send: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < items.length; i = next++) await send(items[i]!);
    }),
  );
}

try {
  // 1. Seeding: through the real SCIM API and reconciler, both budgets lifted.
  const seeding = await start(true);
  const http = keepAliveClient(seeding.url, CONCURRENCY);
  const scimHeaders = { authorization: `Bearer ${SCIM_TOKEN}`, "content-type": "application/scim+json" };
  console.log(
    `seeding ${ACCOUNTS.toLocaleString()} managed accounts in ${GROUPS} groups through the SCIM API and the reconciler…`,
  );
  let started = performance.now();
  const ids: string[] = new Array(ACCOUNTS);
  await each([...Array(ACCOUNTS).keys()], async (i) => {
    const res = await http.call("POST", "/scim/v2/Users", scimHeaders, JSON.stringify(benchUser(userName(i))));
    if (res.status !== 201) throw new Error(`create ${userName(i)}: ${res.status} ${res.text}`);
    ids[i] = (JSON.parse(res.text) as { id: string }).id;
  });
  for (let k = 0; k < GROUPS; k++) {
    const members = ids.filter((_, i) => i % GROUPS === k).map((value) => ({ value }));
    const body = { schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"], displayName: `Group ${k}`, members };
    const res = await http.call("POST", "/scim/v2/Groups", scimHeaders, JSON.stringify(body));
    if (res.status !== 201) throw new Error(`group ${k}: ${res.status} ${res.text}`);
  }
  http.close();
  await until("the seeding's queue to empty", async () => (await queueState(seeding)).total === 0);
  const held = (
    (await seeding.db.query(`SELECT count(*)::int AS n FROM platform_accounts WHERE platform_id IS NOT NULL`)) as {
      n: number;
    }[]
  )[0]!.n;
  console.log(
    `  ${emulator.state.dashboardUsers.list().length.toLocaleString()} accounts on the emulator, ${held.toLocaleString()} in platform_accounts, in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  if (held !== ACCOUNTS) throw new Error(`seeding: ${held} platform accounts, expected ${ACCOUNTS}`);
  await stop(seeding);

  // 2. The dashboard, past the own-write window: a real company's provisioning is older than
  // SECURITY_EVENTS_OWN_WRITE_WINDOW_MINUTES when people edit its accounts, and the report's
  // 10,000 rows no longer hold most creates' Added Account; a change made within the window of a
  // create whose Added Account is not imported is taken for the connector's own write (a limit of
  // the own-write rule, src/platformRecord/findings.ts pickOwnDebit, not of this bench).
  // The emulator's clock is moved on by the window and a minute (the connector's is the system's).
  const advanced = await fetch(`${emulator.url}/_emulator/clock`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ advanceMs: (OWN_WRITE_WINDOW_MINUTES + 1) * 60_000 }),
  });
  if (!advanced.ok) throw new Error(`emulator clock: ${advanced.status}`);
  // Then activity, 200 accounts by hand and 500 permission changes amid it, activity.
  const changed = Array.from({ length: CHANGED }, (_, j) => Math.floor((j * ACCOUNTS) / CHANGED) + 1);
  const granted = new Map(
    changed.map((i) => [i, emulator.state.dashboardUsers.findByUserName(userName(i))!.permissions]),
  );
  // The bench's own model of the mapping: group k grants basic_access in Workspace k % 4, nothing else.
  for (const [i, held] of granted) {
    const words = JSON.stringify(held);
    if (
      !words.includes(`"Workspace ${(i % GROUPS) % 4}"`) ||
      !words.includes("basic_access") ||
      words.includes("admin")
    )
      throw new Error(`seeding: ${userName(i)} holds ${words}, not what the mapping grants`);
  }
  const dash = keepAliveClient(emulator.url, CONCURRENCY);
  const dashboard = async (body: Record<string, unknown>) => {
    const res = await dash.call(
      "POST",
      "/_emulator/dashboard",
      { "content-type": "application/json" },
      JSON.stringify(body),
    );
    if (res.status >= 300) throw new Error(`dashboard ${JSON.stringify(body)}: ${res.status} ${res.text}`);
  };
  const activity = (n: number, offset: number) =>
    Array.from({ length: n }, (_, j) => {
      const email = userName((offset + j * 7) % ACCOUNTS);
      return { action: j % 10 === 9 ? "failed-login" : "sign-in", email, actor: email };
    });
  const others = ROWS - BY_HAND - CHANGED - OWN_IN_REPORT;
  const byHand = Array.from({ length: BY_HAND }, (_, j) => ({
    action: "add-account",
    email: handName(j),
    actor: HUMAN,
    permissions: {
      companyPermissions: [],
      appGroup: [{ appGroupName: "Workspace 0", appGroupPermissions: ["basic_access", "export_user_data"] }],
    },
  }));
  const changes = changed.map((i) => ({
    action: "update-permissions",
    email: userName(i),
    actor: HUMAN,
    permissions: { companyPermissions: ["admin"], appGroup: [] },
  }));
  // The 700 interleaved, as people work: one account by hand after every two or three changes.
  const human = [
    ...changes.map((c, j) => ({ c, at: j / CHANGED })),
    ...byHand.map((c, j) => ({ c, at: (j + 0.5) / BY_HAND })),
  ]
    .sort((a, b) => a.at - b.at)
    .map((x) => x.c);
  started = performance.now();
  for (const batch of [activity(Math.floor(others / 2), 0), human, activity(others - Math.floor(others / 2), 3)])
    await each(batch, dashboard);
  dash.close();
  const report = await (await fetch(`${emulator.url}/_emulator/security-events.csv`)).text();
  const lines = report.trimEnd().split("\r\n").slice(1);
  const countOf = (pattern: RegExp) => lines.filter((l) => pattern.test(l)).length;
  const handRows = lines.filter((l) => l.includes(`,${HUMAN},`));
  console.log(
    `dashboard: ${(BY_HAND + CHANGED + others).toLocaleString()} actions in ${((performance.now() - started) / 1000).toFixed(1)} s; the report: ${lines.length.toLocaleString()} rows (${handRows.filter((l) => l.includes("Added Account")).length} added by hand, ${handRows.filter((l) => l.includes("Updated Account Permission")).length} permission changes by hand, ${countOf(/,SCIM API,/)} the connector's own, ${countOf(/,(Signed In|Failed Login),/)} sign-ins and failed logins)`,
  );
  if (lines.length !== ROWS) misses.push(`the report has ${lines.length} rows, not ${ROWS}`);
  if (handRows.length !== BY_HAND + CHANGED)
    misses.push(`the report holds ${handRows.length} of the ${BY_HAND + CHANGED} human actions`);

  // 3. The import, on a web-only replica: every call the emulator sees meanwhile is the import's.
  const web = await start(false);
  const beforeImport = await emulatorCalls();
  const ledgerBeforeImport = await ledgerRows(web);
  started = performance.now();
  const imported = await fetch(`${web.url}/admin/api/platform/events`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "text/csv" },
    body: report,
  });
  const importSeconds = (performance.now() - started) / 1000;
  const importBody = await imported.text();
  if (imported.status !== 200) throw new Error(`import: ${imported.status} ${importBody}`);
  const afterImport = await emulatorCalls();
  const ledgerAfterImport = await ledgerRows(web);
  const findCalls = Math.max(afterImport.used - beforeImport.used, afterImport.requests - beforeImport.requests);
  console.log(`import answer: ${importBody}`);
  const { findings } = JSON.parse(importBody) as { findings: Record<string, number> };
  const ownRows = countOf(/,SCIM API,/);
  if (findings.ownWrites !== ownRows || findings.candidates !== BY_HAND || findings.outsideChanges !== CHANGED)
    misses.push(
      `findings: ${findings.ownWrites} own writes of ${ownRows}, ${findings.candidates} candidates of ${BY_HAND}, ${findings.outsideChanges} outside changes of ${CHANGED}`,
    );

  // 4. A worker replica confirms the 200 and puts the 500 back.
  started = performance.now();
  const worker = await start(true);
  const unmanaged = async () => {
    const res = await fetch(`${web.url}/admin/api/platform/unmanaged`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    return ((await res.json()) as { accounts: { userName: string; state: string }[] }).accounts;
  };
  // Settled: no candidate left for the discovery lane to look up, and nothing in the reconcile queue.
  const candidatesLeft = async () =>
    (
      (await worker.db.query(`SELECT count(*)::int AS n FROM unmanaged_accounts WHERE state = 'candidate'`)) as {
        n: number;
      }[]
    )[0]!.n;
  await until(
    "the discovery lane and the reconciler to finish",
    async () => (await candidatesLeft()) === 0 && (await queueState(worker)).total === 0,
  );
  const mendSeconds = (performance.now() - started) / 1000;
  const afterMend = await emulatorCalls();
  const ledgerAfterMend = await ledgerRows(worker);
  const queue = await queueState(worker);
  const listed = await unmanaged();
  const confirmed = new Set(listed.filter((a) => a.state === "confirmed").map((a) => a.userName));
  const putBack = changed.filter((i) =>
    isDeepStrictEqual(emulator.state.dashboardUsers.findByUserName(userName(i))?.permissions, granted.get(i)),
  ).length;
  const handMissing = byHand.filter((h) => !confirmed.has(h.email)).length;
  const managedListed = listed.filter((a) => !a.userName.endsWith("@partner.example")).length;

  const mendEmulator = afterMend.used - afterImport.used;
  const mendRequests = afterMend.requests - afterImport.requests;
  const mendLedger = ledgerAfterMend - ledgerAfterImport;
  const mendGoal = BY_HAND + 2 * CHANGED;

  // 5. The alternative: a verifying resync over every account the connector knows.
  const verifyMark = journal.length;
  const beforeVerify = await emulatorCalls();
  const ledgerBeforeVerify = await ledgerRows(worker);
  started = performance.now();
  const deps = {
    db: worker.db,
    clock: systemClock,
    desired: worker.desired,
    policies: { onEmailChange: "hold" as const },
  };
  const runId = await createRun(deps, { dryRun: false, verify: true, trigger: "cli", actor: "bench" });
  const planned = await runPlanPhase(deps, runId);
  await until("the verifying resync to finish", async () => (await getRun(worker.db, runId))?.phase === "done");
  await until("the reconcile queue to empty after the resync", async () => (await queueState(worker)).total === 0);
  const verifySeconds = (performance.now() - started) / 1000;
  const afterVerify = await emulatorCalls();
  const verifyLedger = (await ledgerRows(worker)) - ledgerBeforeVerify;
  const handEmails = new Set(byHand.map((h) => h.email));
  const verifyTouchedHand = journal.slice(verifyMark).filter((e) => e.userName && handEmails.has(e.userName)).length;
  const verifyCalls = afterVerify.used - beforeVerify.used;
  const verifyMethods = new Map<string, number>();
  for (const e of journal.slice(verifyMark)) verifyMethods.set(e.method, (verifyMethods.get(e.method) ?? 0) + 1);
  const unmanagedAfterVerify = (await unmanaged()).length;

  console.log(
    `\nscale ${SCALE}: ${ACCOUNTS.toLocaleString()} managed accounts, ${BY_HAND} made by hand, ${CHANGED} changed in the dashboard, a ${lines.length.toLocaleString()}-row report`,
  );
  console.log(
    `import time: ${importSeconds.toFixed(2)} s (goal under 5 s)   ${check(importSeconds < 5, `import took ${importSeconds.toFixed(2)} s`)}`,
  );
  console.log(
    `platform calls to find: ${findCalls} (emulator: scimDaily.used +${afterImport.used - beforeImport.used}, requests +${afterImport.requests - beforeImport.requests}; ledger +${ledgerAfterImport - ledgerBeforeImport}) (goal 0)   ${check(findCalls === 0 && ledgerAfterImport === ledgerBeforeImport, `${findCalls} calls while importing`)}`,
  );
  console.log(
    `platform calls to confirm and mend: emulator ${mendEmulator} (scimDaily.used; ${mendRequests} requests), ledger ${mendLedger} budget_debits rows (goal ≤ ${BY_HAND} + 2 × ${CHANGED} = ${mendGoal})   ${check(mendEmulator <= mendGoal, `${mendEmulator} calls to confirm and mend`)}; emulator and ledger ${check(mendEmulator === mendLedger && mendRequests === mendEmulator, `emulator ${mendEmulator} (${mendRequests} requests) vs ledger ${mendLedger}`) === "OK" ? "agree" : "DISAGREE"}   ${mendSeconds.toFixed(1)} s`,
  );
  console.log(
    `end state (on the emulator): ${putBack} of ${CHANGED} changed accounts hold the mapping's grants again   ${check(putBack === CHANGED, `${CHANGED - putBack} changed accounts not put back`)}`,
  );
  console.log(
    `end state (GET /admin/api/platform/unmanaged): ${confirmed.size} confirmed unmanaged, ${BY_HAND - handMissing} of the ${BY_HAND} made by hand, ${managedListed} managed accounts listed (goal 0)   ${check(handMissing === 0 && managedListed === 0 && listed.length === BY_HAND, `unmanaged list: ${handMissing} missing, ${managedListed} managed listed, ${listed.length} in all`)}`,
  );
  console.log(
    `end state (reconcile queue): ${queue.total} rows, ${queue.parked} parked, ${queue.deferred} deferred   ${check(queue.total === 0, `queue holds ${queue.total} rows`)}`,
  );
  console.log(
    `the alternative, a verifying resync (run in full): ${verifyCalls.toLocaleString()} calls on the emulator (${[...verifyMethods].map(([m, n]) => `${n.toLocaleString()} ${m}`).join(", ")}; ledger ${verifyLedger.toLocaleString()}; plan: ${JSON.stringify(planned.planSummary)}), ${verifySeconds.toFixed(1)} s; calls about accounts made by hand: ${verifyTouchedHand}; unmanaged listed after it: ${unmanagedAfterVerify} (it finds none of the ${BY_HAND}: it reads only accounts the connector knows)`,
  );
  check(verifyCalls === verifyLedger, `verifying resync: emulator ${verifyCalls} vs ledger ${verifyLedger}`);
  check(verifyTouchedHand === 0, `the verifying resync touched ${verifyTouchedHand} accounts made by hand`);
} catch (error) {
  misses.push(`the bench stopped: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
} finally {
  for (const s of [...services].reverse()) await s.close();
  await emulator.close();
  await pg.stop();
  await rm(dir, { recursive: true, force: true });
}
if (misses.length) console.log(`\nFAILED:\n${misses.map((m) => `  - ${m}`).join("\n")}`);
else console.log("\nall goals met");
process.exitCode = misses.length ? 1 : 0;
