/**
 * bench/evidence-pack: the evidence pack (docs/access-review.md, "Evidence") over a 90-day window
 * for N users (default 20,000) on an embedded PostgreSQL: a create for everyone 85 days ago, an
 * update for every tenth 40 days ago, a deprovision with its queue time for every fiftieth 5 days
 * ago; a campaign over everything, started through the product's use case, with a decision on
 * every item (a revoke for every fiftieth). The pack is written by a child process that does
 * nothing else, so its peak RSS (getrusage maxRSS, read in the child when the pack is done) is the
 * pack's own and not the seeding's; the parent verifies the pack and prints the figures. Run it at
 * two sizes: the peak should not grow with the size.
 *
 * The exit code is 1 when the pack does not verify, when a file's rows differ from what the bench
 * counts with its own SQL over the seeded tables (the log's entries and reductions in the window,
 * the campaigns, decisions and revokes), or when the pack's process grew by more than
 * --max-growth-mb over its baseline (peak RSS less the RSS before the pack). The default, 300 MB,
 * passes the growth measured at 20,000 and 100,000 users (about 230 and 180 MB: V8's heap between
 * collections) and fails the 490 MB of the decisions gathered into one array at 100,000.
 *
 *   npm run bench:evidence [-- --users 20000 --max-growth-mb 300]
 */
import { execFile } from "node:child_process";
import { createPrivateKey, generateKeyPairSync } from "node:crypto";
import { chmod, createReadStream, createWriteStream } from "node:fs";
import { mkdtemp, stat } from "node:fs/promises";
import type { Database } from "../src/db/database.js";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs, promisify } from "node:util";
import tar from "tar-stream";
import { startCampaign } from "../src/review/campaigns/index.js";
import { verifyEvidencePack, writeEvidencePack } from "../src/review/evidence/pack.js";
import { systemClock } from "../src/clock.js";
import { openDatabase } from "../src/db/dataSource.js";
import { startEmbeddedPostgres } from "../src/db/embedded.js";
import { listUsersWithGroups } from "../src/db/idp/userReconcileReads.js";
import { swapMappingState } from "../src/db/mapping/stateRepository.js";
import { desiredDashboardUser } from "../src/mapping/desired.js";
import { explainGrants } from "../src/mapping/reasons.js";
import { parseMapping } from "../src/mapping/file.js";
import { seedTeamsWorld, TEAMS_MAPPING } from "./support/teamsWorld.js";

const { values } = parseArgs({
  options: {
    users: { type: "string", default: "20000" },
    "max-growth-mb": { type: "string", default: "300" },
    "write-pack": { type: "string" },
  },
});
const USERS = Number(values.users);
const MAX_GROWTH_MB = Number(values["max-growth-mb"]);
const DAY = 86_400_000;

type PackJob = { url: string; from: string; to: string; out: string; key: string };
type PackFigures = { seconds: number; peakMb: number; baselineMb: number };

/** The child: writes one pack and prints its figures; its peak RSS is the pack's (and the runtime's). */
async function writePackAlone(job: PackJob): Promise<void> {
  const db = await openDatabase({ url: job.url, poolSize: 2, applicationName: "scim-connector-bench" });
  const baselineMb = process.resourceUsage().maxRSS / 1024;
  const started = performance.now();
  await writeEvidencePack(
    { db, mappingFile: "mapping.yaml", signingKey: createPrivateKey(job.key), now: () => new Date() },
    { from: new Date(job.from), to: new Date(job.to) },
    createWriteStream(job.out),
  );
  const figures: PackFigures = {
    seconds: (performance.now() - started) / 1000,
    peakMb: process.resourceUsage().maxRSS / 1024,
    baselineMb,
  };
  await db.close();
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}

/**
 * Each CSV member's records less its header, counted from the tar as written (quoted cells may
 * hold line breaks; a record ends at a CRLF outside quotes), and latency.json's figures.
 */
async function packContents(file: string): Promise<{ rows: Map<string, number>; latency: Record<string, unknown> }> {
  const rows = new Map<string, number>();
  let latency: Record<string, unknown> = {};
  const extract = tar.extract();
  createReadStream(file).pipe(extract);
  for await (const entry of extract) {
    const name = entry.header.name;
    if (name.endsWith(".csv")) {
      let records = 0;
      let quoted = false;
      let previous = -1;
      for await (const chunk of entry as AsyncIterable<Buffer>)
        for (const byte of chunk) {
          if (byte === 0x22) quoted = !quoted;
          else if (byte === 0x0a && previous === 0x0d && !quoted) records++;
          previous = byte;
        }
      rows.set(name, records - 1);
    } else if (name === "revocations/latency.json") {
      const chunks: Buffer[] = [];
      for await (const chunk of entry as AsyncIterable<Buffer>) chunks.push(chunk);
      latency = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
    } else entry.resume();
  }
  return { rows, latency };
}

/** What the pack's files must hold, counted with the bench's own SQL over the seeded tables. */
async function expectedCounts(db: Database, from: Date, to: Date) {
  const count = async (sql: string) => (await db.query<{ n: number }>(sql, [from, to]))[0]!.n;
  const inWindow = `FROM reconcile_log WHERE at >= $1 AND at < $2`;
  const reduction = `outcome = 'succeeded' AND (action = 'deprovision' OR EXISTS (
      SELECT 1 FROM jsonb_array_elements(changes) c
       WHERE (c->>'kind' = 'account' AND c->>'new' = 'absent')
          OR (c->>'kind' = 'permissions' AND jsonb_array_length(c->'removed') > 0)))`;
  const decided = `FROM campaign_decisions WHERE decided_at >= $1 AND decided_at < $2`;
  return {
    rows: new Map([
      ["changes/changes.csv", await count(`SELECT count(*)::int AS n ${inWindow}`)],
      ["revocations/revocations.csv", await count(`SELECT count(*)::int AS n ${inWindow} AND ${reduction}`)],
      [
        "campaigns/campaigns.csv",
        await count(
          `SELECT count(*)::int AS n FROM campaigns WHERE started_at < $2 AND (closed_at IS NULL OR closed_at >= $1)`,
        ),
      ],
      ["campaigns/decisions.csv", await count(`SELECT count(*)::int AS n ${decided}`)],
      [
        "campaigns/campaign-revocations.csv",
        await count(`SELECT count(*)::int AS n ${decided} AND decision = 'revoke'`),
      ],
    ]),
    latency: {
      reductions: await count(`SELECT count(*)::int AS n ${inWindow} AND ${reduction}`),
      withoutQueueTime: await count(`SELECT count(*)::int AS n ${inWindow} AND ${reduction} AND queued_at IS NULL`),
    },
  };
}

if (values["write-pack"]) {
  await writePackAlone(JSON.parse(values["write-pack"]) as PackJob);
  process.exit(0);
}

const dir = await mkdtemp(path.join(os.tmpdir(), "scim-bench-evidence-"));
chmod(dir, 0o755, () => undefined);
const pg = await startEmbeddedPostgres(path.join(dir, "pg"), { persistent: false, throwaway: true });
try {
  const db = await openDatabase({ url: pg.url, poolSize: 4, applicationName: "scim-connector-bench" });
  await db.migrate();
  const mapping = parseMapping(TEAMS_MAPPING, "mapping.yaml");
  await swapMappingState(db, mapping.hash, TEAMS_MAPPING);
  console.log(`seeding ${USERS.toLocaleString()} users and 90 days of log…`);
  await seedTeamsWorld(db, USERS, Math.max(10, Math.round(USERS / 200)));
  const now = Date.now();
  const insert = `INSERT INTO reconcile_log (at, queued_at, user_id, user_name, action, outcome, changes, after, reasons)
    SELECT $3, $5, id, d->>'userName', $6, 'succeeded', $7::jsonb, d, r FROM unnest($1::uuid[], $2::jsonb[], $4::jsonb[]) AS t(id, d, r)`;
  for (
    let after: string | undefined, users;
    (users = await listUsersWithGroups(db, after, 5_000)).length;
    after = users[users.length - 1]!.id
  ) {
    const held = users.flatMap((u) => {
      const desired = desiredDashboardUser(u, u.groups, mapping);
      return desired ? [{ id: u.id, desired, reasons: explainGrants(desired, u.groups, mapping, u.department) }] : [];
    });
    const rows = (list: typeof held) => [
      list.map((h) => h.id),
      list.map((h) => JSON.stringify(h.desired)),
      list.map((h) => JSON.stringify(h.reasons)),
    ];
    const [ids, docs, reasons] = rows(held);
    await db.query(
      `INSERT INTO platform_accounts (user_id, user_name, platform_id, state, last_applied, applied_at, created_by_connector)
       SELECT id, d->>'userName', 'p-' || id, 'active', d, $3, true FROM unnest($1::uuid[], $2::jsonb[]) AS t(id, d)`,
      [ids, docs, new Date(now - 40 * DAY)],
    );
    const created = '[{"kind":"account","old":"absent","new":"present"}]';
    await db.query(insert, [ids, docs, new Date(now - 85 * DAY), reasons, null, "create", created]);
    const [uIds, uDocs, uReasons] = rows(held.filter((_, i) => i % 10 === 0));
    await db.query(insert, [uIds, uDocs, new Date(now - 40 * DAY), uReasons, null, "update", "[]"]);
    const [dIds, dDocs, dReasons] = rows(held.filter((_, i) => i % 50 === 0));
    const removed = '[{"kind":"account","old":"present","new":"absent"}]';
    await db.query(insert, [
      dIds,
      dDocs,
      new Date(now - 5 * DAY),
      dReasons,
      new Date(now - 5 * DAY - 700),
      "deprovision",
      removed,
    ]);
  }
  // The seeded entries predate the chain, as a migrated database's would.
  await db.query(
    `UPDATE audit_chains SET anchor_id = m.id, head_id = m.id FROM (SELECT max(id) AS id FROM reconcile_log) m WHERE name = 'reconcile_log'`,
  );
  const campaign = await startCampaign(
    { db, clock: systemClock },
    {
      name: "Quarterly review",
      scope: { kind: "everything" },
      dueAt: new Date(now + 14 * DAY).toISOString(),
      reviewers: [{ name: "ciso@example.com" }],
      fallbackReviewer: "security@example.com",
    },
    "bench",
  );
  // A decision on every item 3 days ago (a revoke for every fiftieth), recorded as decisions taken before the chain.
  await db.query(
    `INSERT INTO campaign_decisions (campaign_id, item_id, user_id, user_name, scope, workspace, team, permission, reviewer, decision, comment, decided_by, decided_at)
     SELECT campaign_id, id, user_id, user_name, scope, workspace, team, permission, reviewer,
            CASE WHEN id % 50 = 0 THEN 'revoke' ELSE 'keep' END, 'reviewed in the quarterly review', 'ciso@example.com', $2
       FROM campaign_items WHERE campaign_id = $1`,
    [campaign.id, new Date(now - 3 * DAY)],
  );
  await db.query(
    `UPDATE audit_chains SET anchor_id = m.id, head_id = m.id FROM (SELECT max(id) AS id FROM campaign_decisions) m WHERE name = 'campaign_decisions'`,
  );
  await db.query(`ANALYZE`);
  const [{ n }] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM reconcile_log WHERE at >= $1`, [
    new Date(now - 90 * DAY),
  ]);
  const [{ d }] = await db.query<{ d: number }>(`SELECT count(*)::int AS d FROM campaign_decisions`);
  const seededMb = process.resourceUsage().maxRSS / 1024;
  const keys = generateKeyPairSync("ed25519");
  const file = path.join(dir, "pack.tar");
  const job: PackJob = {
    url: pg.url,
    from: new Date(now - 90 * DAY).toISOString(),
    to: new Date(now + DAY).toISOString(),
    out: file,
    key: keys.privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
  };
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url), "--write-pack", JSON.stringify(job)],
    { maxBuffer: 1 << 20 },
  );
  const pack = JSON.parse(stdout.trim().split("\n").at(-1)!) as PackFigures;
  const verdict = await verifyEvidencePack(createReadStream(file), keys.publicKey);
  const files = verdict.manifest?.sections.flatMap((s) => s.files) ?? [];
  console.log(
    `log entries in the window (SQL): ${n.toLocaleString()}; campaign decisions (SQL): ${d.toLocaleString()}`,
  );
  for (const f of files) console.log(`  ${f.path.padEnd(36)} ${(f.bytes / 1048576).toFixed(2).padStart(8)} MB`);
  console.log(`pack written in ${pack.seconds.toFixed(2)} s, ${((await stat(file)).size / 1048576).toFixed(1)} MB`);
  console.log(
    `the pack's process: peak RSS ${pack.peakMb.toFixed(0)} MB (${pack.baselineMb.toFixed(0)} MB with the modules loaded and the pool open, before the pack); the seeding process: ${seededMb.toFixed(0)} MB`,
  );
  console.log(`verified with the public key: ${verdict.ok ? "yes" : `NO: ${verdict.problems.join("; ")}`}`);
  const failures = verdict.ok ? [] : ["the pack does not verify"];
  const held = await packContents(file);
  const expected = await expectedCounts(db, new Date(job.from), new Date(job.to));
  for (const [member, want] of expected.rows) {
    const got = held.rows.get(member);
    console.log(`  ${member.padEnd(36)} ${String(got).padStart(8)} rows, SQL ${want}`);
    if (got !== want) failures.push(`${member} holds ${got} rows where the database has ${want}`);
  }
  for (const [figure, want] of Object.entries(expected.latency)) {
    const got = held.latency[figure];
    console.log(`  revocations/latency.json ${figure.padEnd(27)} ${String(got).padStart(8)}, SQL ${want}`);
    if (got !== want) failures.push(`latency.json's ${figure} is ${String(got)} where the database has ${want}`);
  }
  const growthMb = pack.peakMb - pack.baselineMb;
  if (growthMb > MAX_GROWTH_MB)
    failures.push(`the pack's process grew by ${growthMb.toFixed(0)} MB, over --max-growth-mb ${MAX_GROWTH_MB}`);
  for (const f of failures) console.log(`FAILED: ${f}`);
  if (failures.length) process.exitCode = 1;
  await db.close();
} finally {
  await pg.stop();
}
