/**
 * bench/campaign: an access campaign (docs/access-review.md, "Campaigns") over N users × 5 grants
 * (default 100,000: 500,000 items) on an embedded PostgreSQL. Seeds the applied states and the log
 * entries that applied them (with their reasons) directly in SQL, starts a campaign over
 * everything through the product's use case (startCampaign) and times it (target < 10 s), counts
 * the items frozen in SQL against the grants seeded, then times ~50 requests for a reviewer's page
 * through the HTTP API (/admin/api/campaigns/<id>/items, paged with the cursor and filtered; target
 * p95 < 200 ms). Prints the figures and their ratio to the targets; exits 1 when one is missed.
 *
 * Then 1,000 items are kept and 200 revoked over the API, and the two counts that cover every item
 * are timed over HTTP (target p95 < 100 ms): the campaign's (the admin's "every reviewer" view
 * shows them) and the Campaigns list's; each answer must equal the bench's own count in SQL.
 *
 * Each user's reasons are their own (their group's name and id), as a directory's would be: no two
 * users' reasons are the same jsonb, so nothing in the start can reuse one user's work for another.
 *
 * --model granular seeds the same users as a granular mapping gives them (the 45 strings of
 * basic_access + send_campaigns_canvases where the legacy states hold basic_access; a role; a
 * permission set): 136 strings a user, still 5 reviewable grants (src/mapping/reasons.ts groups a
 * rule's strings per workspace). --model both (the default) runs legacy, then granular on a fresh
 * seed, and judges granular against legacy: no more items, and PostgreSQL's CPU for the start at
 * most 1.10 × legacy's.
 *
 *   npm run bench:campaign [-- --users 100000 --requests 50 --model legacy|granular|both]
 */
import { chmod, mkdtemp, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { startCampaign, startCampaignSchema } from "../src/review/campaigns/index.js";
import { listCampaignItems } from "../src/db/campaigns/itemRepository.js";
import { insertCampaign } from "../src/db/campaigns/start.js";
import type { Queryable } from "../src/db/database.js";
import { GRANULAR_ONLY_STRINGS, NO_RULE } from "../src/mapping/reasons.js";
import { systemClock } from "../src/clock.js";
import { loadEnv } from "../src/config/env.js";
import type { Database } from "../src/db/database.js";
import { openDatabase } from "../src/db/dataSource.js";
import { startEmbeddedPostgres } from "../src/db/embedded.js";
import { GRANULAR, LEGACY, seedWorld, type World } from "./support/campaignWorlds.js";
import { startService } from "../src/service.js";
import { cpuMsOf } from "./support/processCpu.js";
import { TEAMS_MAPPING } from "./support/teamsWorld.js";
import { validate } from "../src/http/validate.js";

const USAGE = `npm run bench:campaign [-- OPTIONS]

  --users N       accounts seeded (default 100000; each holds 5 reviewable grants)
  --requests N    reviewer page requests timed over HTTP (default 50)
  --model M       the mapping model of the seeded states: legacy (5 strings a user), granular (45
                  strings for one basic_access + send_campaigns_canvases, a role, a permission set:
                  136 strings, still 5 items), or both (default): each seeded afresh, its campaign
                  started, its pages and counts timed; with both, granular is judged against legacy
  --explain       before each timed start, run the start's statements once in a transaction rolled
                  back: each statement's time, and EXPLAIN (ANALYZE, BUFFERS) of its INSERTs
  --help          this text

On a shared machine, keep --users small (10000–20000): the legacy run alone seeds 5 grants a user.`;

const { values } = parseArgs({
  options: {
    users: { type: "string", default: "100000" },
    requests: { type: "string", default: "50" },
    model: { type: "string", default: "both" },
    explain: { type: "boolean", default: false },
    help: { type: "boolean", default: false },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const USERS = Number(values.users);
const REQUESTS = Number(values.requests);
const COUNT_REQUESTS = 20;
const MODEL = values.model;
if (!["legacy", "granular", "both"].includes(MODEL)) {
  console.error(`--model: legacy, granular or both, not ${MODEL}\n\n${USAGE}`);
  process.exit(2);
}
const GRANTS_PER_USER = 5;
const ADMIN_TOKEN = "bench-admin-token-0123456789abcdefghij";
const DAY = 86_400_000;

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

const dir = await mkdtemp(path.join(os.tmpdir(), "scim-bench-campaign-"));
await chmod(dir, 0o755);
const pg = await startEmbeddedPostgres(path.join(dir, "pg"), { persistent: false, throwaway: true });
let missed = 0;
const judge = (what: string, value: number, target: number, unit: string) => {
  const ok = value < target;
  if (!ok) missed++;
  console.log(
    `${what.padEnd(44)} ${value.toFixed(unit === "s" ? 2 : 1).padStart(8)} ${unit}   target < ${target} ${unit}   ratio ${(value / target).toFixed(2)}   ${ok ? "OK" : "MISSED"}`,
  );
};

/** Seeds `world`'s accounts and the log entries that applied them (replacing any earlier world's). */
async function seed(db: Database, world: World): Promise<void> {
  console.log(`seeding ${USERS.toLocaleString()} users × ${GRANTS_PER_USER} grants of applied state (${world.name})…`);
  const seedStarted = performance.now();
  await seedWorld(db, world, USERS, new Date(Date.now() - 30 * DAY));
  console.log(`seeded in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`);
}

/**
 * For --explain: `q` with each statement timed and printed; the statements `explained` matches run
 * under EXPLAIN (ANALYZE, BUFFERS), their plans printed (their rows are not returned).
 */
function explaining(q: Queryable, explained: RegExp): Queryable {
  const timed = async (sql: string, params?: readonly unknown[]) => {
    const explain = explained.test(sql);
    const t = performance.now();
    const rows = await q.query(explain ? `EXPLAIN (ANALYZE, BUFFERS) ${sql}` : sql, params);
    console.log(`  ${(performance.now() - t).toFixed(0).padStart(6)} ms  ${sql.trim().split("\n")[0]!.slice(0, 110)}`);
    if (explain) console.log(rows.map((r: Record<string, string>) => `          ${r["QUERY PLAN"]}`).join("\n"));
    return rows;
  };
  // The transaction or database itself (its brand), each statement timed.
  return Object.assign(Object.create(q) as Queryable, {
    query: timed,
    execute: async (sql: string, params?: readonly unknown[]) => (await timed(sql, params)).length,
  });
}

/** --explain: the start's statements run once through the repository, in a transaction rolled back. */
async function explainStart(db: Database, input: Parameters<typeof insertCampaign>[1]): Promise<void> {
  const rollback = new Error("rolled back");
  await db
    .transaction(async (tx) => {
      const spy = explaining(tx, /^\s*(WITH|INSERT INTO campaign_items)/i);
      await insertCampaign(spy, input, { granularOnly: GRANULAR_ONLY_STRINGS, noRule: NO_RULE });
      throw rollback;
    })
    .catch((error: unknown) => {
      if (error !== rollback) throw error;
    });
}

const mb = (bytes: string) => `${(Number(bytes) / 2 ** 20).toFixed(0)} MB`;

/** Starts the campaign over everything on what is seeded, times it and counts its items in SQL. */
async function startTimed(
  db: Database,
  world: World,
): Promise<{ id: string; items: number; seconds: number; postgresMs: number }> {
  // The campaign over everything, through the use case the API and the CLI call; five workspace owners review.
  const input = {
    name: `Bench review (${world.name})`,
    scope: { kind: "everything" },
    dueAt: new Date(Date.now() + 14 * DAY).toISOString(),
    reviewers: Array.from({ length: 5 }, (_, k) => ({ name: `owner${k}@example.com`, workspace: `Workspace ${k}` })),
    fallbackReviewer: "security@example.com",
  };
  if (values.explain) {
    const { reviewers, fallbackReviewer, name, dueAt } = input;
    await explainStart(db, {
      name,
      scope: input.scope as { kind: "everything" },
      reviewers,
      fallbackReviewer: `name:${fallbackReviewer}`,
      dueAt: new Date(dueAt),
      startedBy: "bench --explain",
      startedAt: new Date(),
    });
    await db.query(`VACUUM campaign_items`);
  }
  // PostgreSQL's own CPU (/proc, every process pg_stat_activity lists) and this process's: on a
  // shared machine the neighbours' load moves the wall clock far more than the CPU spent.
  const postgresCpu = async () => {
    const rows = await db.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity`);
    return new Map(rows.map(({ pid }) => [pid, cpuMsOf([pid])]));
  };
  const walLsn = async () => (await db.query<{ lsn: string }>(`SELECT pg_current_wal_lsn()::text AS lsn`))[0]!.lsn;
  const walBefore = await walLsn();
  const cpuBefore = await postgresCpu();
  const nodeBefore = process.cpuUsage();
  const started = performance.now();
  const campaign = await startCampaign({ db, clock: systemClock }, validate(startCampaignSchema, input), "bench");
  const seconds = (performance.now() - started) / 1000;
  const node = process.cpuUsage(nodeBefore);
  const cpuAfter = await postgresCpu();
  // What the start wrote: its WAL, and the items' tables with their indexes (one campaign: the bench's).
  const [written] = await db.query<{ wal: string; items: string }>(
    `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::bigint AS wal,
            (SELECT sum(pg_total_relation_size(relid)) FROM pg_partition_tree('campaign_items'))::bigint AS items`,
    [walBefore],
  );
  let postgresMs = 0;
  for (const [pid, ms] of cpuAfter) postgresMs += (ms ?? 0) - (cpuBefore.get(pid) ?? 0);
  // The items counted in SQL, not taken from the use case's answer.
  const [counted] = await db.query<{ items: number; with_reasons: number; reviewers: number }>(
    `SELECT count(*)::int AS items, count(*) FILTER (WHERE reasons IS NOT NULL)::int AS with_reasons,
            count(DISTINCT reviewer)::int AS reviewers FROM campaign_items WHERE campaign_id = $1`,
    [campaign.id],
  );
  const expected = USERS * GRANTS_PER_USER;
  console.log(
    `items frozen (SQL, ${world.name}: ${world.strings} a user): ${counted!.items.toLocaleString()} of ${expected.toLocaleString()} grants seeded; with their reasons: ${counted!.with_reasons.toLocaleString()}; reviewers: ${counted!.reviewers}`,
  );
  if (counted!.items !== expected || counted!.with_reasons !== expected) {
    console.log("MISSED: the campaign did not freeze every grant with its reasons");
    missed++;
  }
  judge(`campaign start, ${world.name} (${counted!.items.toLocaleString()} items)`, seconds, 10, "s");
  console.log(
    `  CPU during the start: PostgreSQL ${(postgresMs / 1000).toFixed(2)} s (its processes, from /proc), this process ${((node.user + node.system) / 1e6).toFixed(2)} s; written: ${mb(written!.wal)} of WAL, the items ${mb(written!.items)} with their indexes`,
  );
  return { id: campaign.id, items: counted!.items, seconds, postgresMs };
}

/** The reviewer pages of `campaignId` over HTTP: ~REQUESTS pages of 100 items, five kinds; judges the p95. */
async function timePages(db: Database, url: string, campaignId: string, model: string): Promise<void> {
  const get = async (query: string) => {
    const t = performance.now();
    const res = await fetch(`${url}/admin/api/campaigns/${campaignId}/items?${query}`, {
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    const body = (await res.json()) as { items: { reviewer: string }[]; nextCursor: string | null };
    const ms = performance.now() - t;
    if (res.status !== 200 || !body.items.length) throw new Error(`${query}: ${res.status} ${JSON.stringify(body)}`);
    return { ms, body };
  };
  const queries = (reviewer: string, cursor: string | null) => [
    `as=${reviewer}&limit=100${cursor ? `&cursor=${cursor}` : ""}`,
    `as=${reviewer}&limit=100&decision=open`,
    `as=${reviewer}&limit=100&permission=export_user_data`,
    `as=${reviewer}&limit=100&user=user12`,
    `as=admin@example.com&reviewer=all&limit=100&workspace=Workspace%203`,
  ];
  for (let i = 0; i < 5; i++) await get(queries("owner1@example.com", null)[i]!); // warm the pool
  if (values.explain) {
    // The pages' queries as the repository writes them (the API adds the reviewer's keys, as here).
    const spy = explaining(db, /^\s*SELECT/i);
    const owner = ["name:owner1@example.com", "role:admin"]; // keysOf({ name: owner1, role: admin })
    for (const filter of [
      { reviewers: owner },
      { reviewers: owner, decision: "open" as const },
      { reviewers: owner, permission: "export_user_data" },
      { reviewers: owner, user: "user12" },
      { workspace: "Workspace 3" },
    ])
      await listCampaignItems(spy, campaignId, filter, undefined, 101);
  }
  const times: number[] = [];
  const byVariant: number[][] = [[], [], [], [], []];
  const cursors: Record<string, string | null> = {};
  for (let i = 0; times.length < REQUESTS; i++) {
    const reviewer = `owner${i % 5}@example.com`;
    const variants = queries(reviewer, cursors[reviewer] ?? null);
    const variant = Math.floor(i / 5) % variants.length;
    const query = variants[variant]!;
    const { ms, body } = await get(query);
    if (variant === 0) cursors[reviewer] = body.nextCursor; // the reviewer's next page, next time
    if (query.startsWith(`as=${reviewer}`) && body.items.some((it) => it.reviewer !== `name:${reviewer}`))
      throw new Error(`${query}: items of another reviewer`);
    times.push(ms);
    byVariant[variant]!.push(ms);
  }
  times.sort((a, b) => a - b);
  console.log(
    `reviewer pages over HTTP (${model}): ${times.length} requests (100 items each; cursor paging, decision, permission, user prefix, admin by workspace): p50 ${percentile(times, 50).toFixed(1)} ms, max ${times.at(-1)!.toFixed(1)} ms`,
  );
  const names = ["next page (cursor)", "decision=open", "permission", "user prefix", "admin, one workspace"];
  console.log(
    `  max by kind: ${byVariant
      .flatMap((v, k) => (v.length ? [`${names[k]} ${Math.max(...v).toFixed(1)} ms`] : []))
      .join(", ")}`,
  );
  judge(`reviewer page p95, ${model}`, percentile(times, 95), 200, "ms");
}

type Counts = { items: number; open: number; kept: number; revoked: number };

/**
 * Decides some items over the API (1,000 kept for owner1, 200 revoked for owner2), then times the
 * two counts that read every item: the campaign's counts (GET /admin/api/campaigns/<id>, the ones the
 * admin's "every reviewer" view shows) and the Campaigns list (GET /admin/api/campaigns); each
 * answer is compared with the bench's own count of the items in SQL. Target < 100 ms each (p95).
 */
async function timeCounts(db: Database, url: string, campaignId: string, model: string): Promise<void> {
  const api = async (method: string, route: string, body?: unknown) => {
    const t = performance.now();
    const res = await fetch(`${url}/admin/api${route}`, {
      method,
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const json = (await res.json()) as unknown;
    if (res.status !== 200) throw new Error(`${method} ${route}: ${res.status} ${JSON.stringify(json)}`);
    return { ms: performance.now() - t, json };
  };
  for (const [as, decision, comment] of [
    ["owner1@example.com", "keep", undefined],
    ["owner2@example.com", "revoke", "bench: no longer needed"],
  ] as const) {
    const limit = decision === "keep" ? 1000 : 200;
    const { json } = await api("GET", `/campaigns/${campaignId}/items?as=${as}&decision=open&limit=${limit}`);
    const items = (json as { items: { id: string }[] }).items.map((i) => i.id);
    await api("POST", `/campaigns/${campaignId}/decisions`, { as, items, decision, ...(comment ? { comment } : {}) });
  }
  // The bench's own count, from the items' rows.
  const [sql] = await db.query<Counts>(
    `SELECT count(*)::int AS items, count(*) FILTER (WHERE decision IS NULL)::int AS open,
            count(*) FILTER (WHERE decision = 'keep')::int AS kept, count(*) FILTER (WHERE decision = 'revoke')::int AS revoked
       FROM campaign_items WHERE campaign_id = $1`,
    [campaignId],
  );
  const same = (what: string, c: Counts) => {
    const ok = (["items", "open", "kept", "revoked"] as const).every((k) => c[k] === sql![k]);
    if (!ok) {
      missed++;
      console.log(`MISSED: ${what} counts ${JSON.stringify(c)}, the items in SQL ${JSON.stringify(sql)}`);
    }
  };
  const detail: number[] = [];
  const list: number[] = [];
  for (let i = 0; i < COUNT_REQUESTS; i++) {
    const d = await api("GET", `/campaigns/${campaignId}`);
    detail.push(d.ms);
    same("the campaign's", (d.json as { counts: Counts }).counts);
    const l = await api("GET", `/campaigns`);
    list.push(l.ms);
    const listed = (l.json as { campaigns: { id: string; counts: Counts }[] }).campaigns.find(
      (c) => c.id === campaignId,
    );
    same("the Campaigns list's", listed!.counts);
  }
  detail.sort((a, b) => a - b);
  list.sort((a, b) => a - b);
  console.log(
    `counts over HTTP (${model}; SQL: ${sql!.items.toLocaleString()} items, ${sql!.kept} kept, ${sql!.revoked} revoked): ${COUNT_REQUESTS} requests each, the campaign's p50 ${percentile(detail, 50).toFixed(1)} ms, the list's p50 ${percentile(list, 50).toFixed(1)} ms`,
  );
  judge(`every reviewer's counts p95, ${model}`, percentile(detail, 95), 100, "ms");
  judge(`Campaigns list p95, ${model}`, percentile(list, 95), 100, "ms");
}

try {
  const db = await openDatabase({ url: pg.url, poolSize: 4, applicationName: "scim-connector-bench" });
  await db.migrate();
  // The service as deployed, without workers, for the pages and the counts.
  const mappingFile = path.join(dir, "mapping.yaml");
  await writeFile(mappingFile, TEAMS_MAPPING);
  const service = await startService({
    env: loadEnv({
      PORT: "0",
      HOST: "127.0.0.1",
      SCIM_TOKEN: "bench-scim-token-0123456789abcdefghij",
      ADMIN_TOKEN,
      MAPPING_FILE: mappingFile,
      LOG_LEVEL: "error",
    }),
    databaseUrl: pg.url,
    workers: false,
  });
  const started: Record<string, { items: number; seconds: number; postgresMs: number }> = {};
  try {
    for (const world of MODEL === "both" ? [LEGACY, GRANULAR] : MODEL === "granular" ? [GRANULAR] : [LEGACY]) {
      await seed(db, world);
      const campaign = await startTimed(db, world);
      started[world.name] = campaign;
      await timePages(db, service.url, campaign.id, world.name);
      await timeCounts(db, service.url, campaign.id, world.name);
    }
  } finally {
    await service.close();
  }
  const { legacy, granular } = started;
  if (legacy && granular) {
    const itemsOk = granular.items <= legacy.items;
    // "No slower": judged on PostgreSQL's CPU (the wall clock moves with the neighbours), 10 % for noise.
    const cpuOk = granular.postgresMs <= legacy.postgresMs * 1.1;
    if (!itemsOk || !cpuOk) missed++;
    console.log(
      `granular against legacy: items ${granular.items.toLocaleString()} vs ${legacy.items.toLocaleString()} (${itemsOk ? "no more: OK" : "MORE: MISSED"}), start ${granular.seconds.toFixed(2)} s vs ${legacy.seconds.toFixed(2)} s (ratio ${(granular.seconds / legacy.seconds).toFixed(2)}), PostgreSQL CPU ${(granular.postgresMs / 1000).toFixed(2)} s vs ${(legacy.postgresMs / 1000).toFixed(2)} s (ratio ${(granular.postgresMs / legacy.postgresMs).toFixed(2)}: ${cpuOk ? "OK" : "SLOWER: MISSED"}, at most 1.10)`,
    );
  }
  await db.close();
} finally {
  await pg.stop();
}
process.exitCode = missed ? 1 : 0;
