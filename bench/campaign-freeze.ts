/**
 * bench/campaign-freeze: where a campaign start's freeze (the one INSERT … SELECT of
 * src/db/campaigns/start.ts) spends PostgreSQL's CPU, legacy against granular (issue 35). Seeds the
 * states bench:campaign seeds (bench/support/campaignWorlds.ts), then runs the real start through
 * `insertCampaign` --runs times per variant (round-robin), each in a transaction rolled back, with the freeze's
 * statement replaced by a variant of itself, and reads that statement's CPU from its backend's
 * /proc entry (the wall clock moves with a shared machine's load; one backend's CPU far less):
 *
 * - as is;
 * - without the bundles' strings written (the items' `bundle` NULL): what writing each granular
 *   item's copy of its bundle costs, the most that storing each distinct bundle once could save;
 * - without `e.after = h.held` (the check that the applying log entry applied the state held as it
 *   stands): what comparing two whole states costs;
 * - without either.
 *
 * The variants are not behaviour (they would freeze wrong items); they attribute the cost. Each is
 * a textual replacement in the freeze's SQL, checked to apply: a freeze rewritten so that one no
 * longer applies stops this bench with the variant's name. Prints the minimum and the median.
 *
 *   npx tsx bench/campaign-freeze.ts [--users 10000 --runs 5]
 */
import { chmod, mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { insertCampaign } from "../src/db/campaigns/start.js";
import type { Queryable } from "../src/db/database.js";
import { openDatabase } from "../src/db/dataSource.js";
import { startEmbeddedPostgres } from "../src/db/embedded.js";
import { GRANULAR_ONLY_STRINGS, NO_RULE } from "../src/mapping/reasons.js";
import { GRANULAR, LEGACY, seedWorld } from "./support/campaignWorlds.js";
import { cpuMsOf } from "./support/processCpu.js";

const { values } = parseArgs({
  options: { users: { type: "string", default: "10000" }, runs: { type: "string", default: "5" } },
});
const USERS = Number(values.users);
const RUNS = Number(values.runs);
if (!(USERS > 0) || !(RUNS > 0)) {
  console.error("npx tsx bench/campaign-freeze.ts [--users N --runs N]");
  process.exit(2);
}
const DAY = 86_400_000;

/** A textual change of the freeze's SQL; throws when the SQL no longer holds `from`. */
const replacing =
  (name: string, from: string, to: string) =>
  (sql: string): string => {
    if (!sql.includes(from))
      throw new Error(`variant "${name}": the freeze's SQL no longer holds ${JSON.stringify(from)}`);
    return sql.replace(from, to);
  };
const noBundles = replacing("bundles not written", "g.bundle, g.reasons,", "NULL::jsonb, g.reasons,");
const noStateCheck = replacing("no e.after = h.held", "AND e.after = h.held", "");
const VARIANTS: [string, (sql: string) => string][] = [
  ["as is", (sql) => sql],
  ["bundles not written", noBundles],
  ["no e.after = h.held", noStateCheck],
  ["neither", (sql) => noStateCheck(noBundles(sql))],
];

/**
 * The start once through `insertCampaign` on `session` (one backend), rolled back, its freeze's
 * SQL rewritten by `variant`: the freeze's CPU in ms (from /proc, 10 ms ticks) and the items it wrote.
 */
async function freezeOnce(
  session: Queryable,
  variant: (sql: string) => string,
): Promise<{ ms: number; items: number }> {
  const [{ pid }] = (await session.query<{ pid: number }>(`SELECT pg_backend_pid() AS pid`)) as [{ pid: number }];
  let measured: { ms: number; items: number } | undefined;
  const spy = Object.assign(Object.create(session) as Queryable, {
    execute: async (sql: string, params?: readonly unknown[]) => {
      const before = cpuMsOf([pid]);
      const items = await session.execute(variant(sql), params);
      const after = cpuMsOf([pid]);
      if (before === undefined || after === undefined) throw new Error("no /proc: this bench reads the backend's CPU");
      measured = { ms: after - before, items };
      return items;
    },
  });
  await session.query("BEGIN");
  try {
    await insertCampaign(
      spy,
      {
        name: "freeze bench",
        scope: { kind: "everything" },
        reviewers: Array.from({ length: 5 }, (_, k) => ({
          name: `owner${k}@example.com`,
          workspace: `Workspace ${k}`,
        })),
        fallbackReviewer: "name:security@example.com",
        dueAt: new Date(Date.now() + 14 * DAY),
        startedBy: "bench:campaign-freeze",
        startedAt: new Date(),
      },
      { granularOnly: GRANULAR_ONLY_STRINGS, noRule: NO_RULE },
    );
  } finally {
    await session.query("ROLLBACK");
  }
  if (!measured) throw new Error("insertCampaign ran no execute(): the freeze is no longer one statement");
  return measured;
}

const dir = await mkdtemp(path.join(os.tmpdir(), "scim-bench-freeze-"));
await chmod(dir, 0o755);
const pg = await startEmbeddedPostgres(path.join(dir, "pg"), { persistent: false, throwaway: true });
try {
  const db = await openDatabase({ url: pg.url, poolSize: 2, applicationName: "scim-connector-bench-freeze" });
  await db.migrate();
  console.log(
    `the freeze's PostgreSQL CPU (its backend, /proc), ${USERS.toLocaleString()} users, ${RUNS} runs a variant`,
  );
  for (const world of [LEGACY, GRANULAR]) {
    await seedWorld(db, world, USERS, new Date(Date.now() - 30 * DAY));
    // Settled, as a database autovacuum has visited: the runs then read the same pages the same way.
    await db.query(`VACUUM`);
    await db.session(async (session) => {
      await session.query(`SET max_parallel_workers_per_gather = 0`); // one backend does it all
      await freezeOnce(session, (sql) => sql); // warm the caches
      // Round-robin, so that a neighbour's burst of load falls on every variant alike.
      const runs = VARIANTS.map(() => [] as { ms: number; items: number }[]);
      for (let i = 0; i < RUNS; i++)
        for (const [k, [, variant]] of VARIANTS.entries()) runs[k]!.push(await freezeOnce(session, variant));
      for (const [k, [name]] of VARIANTS.entries()) {
        const ms = runs[k]!.map((r) => r.ms).sort((a, b) => a - b);
        console.log(
          `${world.name.padEnd(9)} ${name.padEnd(20)} min ${String(ms[0]).padStart(6)} ms   median ${String(ms[Math.floor(ms.length / 2)]).padStart(6)} ms   (${runs[k]![0]!.items.toLocaleString()} items)`,
        );
      }
    });
  }
  await db.close();
} finally {
  await pg.stop();
}
