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
 *   npm run bench:evidence [-- --users 20000]
 */
import { execFile } from "node:child_process";
import { createPrivateKey, generateKeyPairSync } from "node:crypto";
import { chmod, createReadStream, createWriteStream } from "node:fs";
import { mkdtemp, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs, promisify } from "node:util";
import { startCampaign } from "../src/admin/campaigns/index.js";
import { verifyEvidencePack, writeEvidencePack } from "../src/admin/evidence/pack.js";
import { systemClock } from "../src/clock.js";
import { openDatabase } from "../src/db/dataSource.js";
import { startEmbeddedPostgres } from "../src/db/embedded.js";
import { listUsersWithGroups } from "../src/db/idpUserReconcileReads.js";
import { swapMappingState } from "../src/db/mappingStateRepository.js";
import { desiredDashboardUser } from "../src/mapping/desired.js";
import { explainGrants } from "../src/mapping/reasons.js";
import { parseMapping } from "../src/mapping/file.js";
import { seedTeamsWorld, TEAMS_MAPPING } from "./support/teamsWorld.js";

const { values } = parseArgs({
  options: { users: { type: "string", default: "20000" }, "write-pack": { type: "string" } },
});
const USERS = Number(values.users);
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
  if (!verdict.ok) process.exitCode = 1;
  await db.close();
} finally {
  await pg.stop();
}
