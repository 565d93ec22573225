/**
 * bench/access-report: the access report (docs/access-review.md) for 100,000 users in 500 groups
 * on an embedded PostgreSQL: the first page (now, filtered, and as of a past moment), the totals,
 * and the whole report exported as CSV (streamed into a counting sink). Prints the figures
 * beside the targets (first page under 1 s; export under 30 s with bounded memory: a live heap
 * under 64 MB; every grant held exported, counted in the sink against a count in SQL) and exits
 * 1 when one is missed. The log is
 * seeded with the reasons the reconciler records with each applied state, so the report as of a
 * past moment reads them (reasonsAsOf: applied) rather than computing today's.
 *
 *   npm run bench:access [-- --users 100000 --groups 500]
 */
import { chmod, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { parseArgs } from "node:util";
import { writeAccessReport } from "../src/review/access/export.js";
import { accessPage, accessTotals } from "../src/review/access/report.js";
import { parseMapping } from "../src/mapping/file.js";
import { openDatabase } from "../src/db/dataSource.js";
import { startEmbeddedPostgres } from "../src/db/embedded.js";
import { listUsersWithGroups } from "../src/db/idp/userReconcileReads.js";
import { swapMappingState } from "../src/db/mapping/stateRepository.js";
import { desiredDashboardUser } from "../src/mapping/desired.js";
import { explainGrants } from "../src/mapping/reasons.js";
import { DesiredAccess } from "../src/mapping/desiredAccess.js";
import { seedTeamsWorld, TEAMS_MAPPING } from "./support/teamsWorld.js";

const { values } = parseArgs({
  options: { users: { type: "string", default: "100000" }, groups: { type: "string", default: "500" } },
});
const USERS = Number(values.users);
const GROUPS = Number(values.groups);

const dir = await mkdtemp(path.join(os.tmpdir(), "scim-bench-access-"));
await chmod(dir, 0o755);
const pg = await startEmbeddedPostgres(path.join(dir, "pg"), { persistent: false, throwaway: true });
try {
  const db = await openDatabase({ url: pg.url, poolSize: 4, applicationName: "scim-connector-bench" });
  await db.migrate();
  const mapping = parseMapping(TEAMS_MAPPING, "mapping.yaml");
  await swapMappingState(db, mapping.hash, TEAMS_MAPPING);

  console.log(`seeding ${USERS.toLocaleString()} users in ${GROUPS} groups, their accounts and their log…`);
  await seedTeamsWorld(db, USERS, GROUPS);
  // What the reconciler would have applied, with its reasons: a create 30 days ago, and an update 10 days ago for
  // every tenth user.
  const created = new Date(Date.now() - 30 * 86_400_000);
  const updated = new Date(Date.now() - 10 * 86_400_000);
  for (
    let after: string | undefined, users;
    (users = await listUsersWithGroups(db, after, 5_000)).length;
    after = users[users.length - 1]!.id
  ) {
    const held = users.flatMap((u) => {
      const desired = desiredDashboardUser(u, u.groups, mapping);
      return desired ? [{ id: u.id, desired, reasons: explainGrants(desired, u.groups, mapping, u.department) }] : [];
    });
    const ids = held.map((h) => h.id);
    const docs = held.map((h) => JSON.stringify(h.desired));
    const reasons = held.map((h) => JSON.stringify(h.reasons));
    await db.query(
      `INSERT INTO platform_accounts (user_id, user_name, platform_id, state, last_applied, applied_at, created_by_connector)
       SELECT id, d->>'userName', 'p-' || id, 'active', d, $3, true FROM unnest($1::uuid[], $2::jsonb[]) AS t(id, d)`,
      [ids, docs, updated],
    );
    await db.query(
      `INSERT INTO reconcile_log (at, user_id, user_name, action, outcome, after, reasons) SELECT $3, id, d->>'userName', 'create', 'succeeded', d, r FROM unnest($1::uuid[], $2::jsonb[], $4::jsonb[]) AS t(id, d, r)`,
      [ids, docs, created, reasons],
    );
    const some = held.filter((_, i) => i % 10 === 0);
    await db.query(
      `INSERT INTO reconcile_log (at, user_id, user_name, action, outcome, after, reasons) SELECT $3, id, d->>'userName', 'update', 'succeeded', d, r FROM unnest($1::uuid[], $2::jsonb[], $4::jsonb[]) AS t(id, d, r)`,
      [
        some.map((h) => h.id),
        some.map((h) => JSON.stringify(h.desired)),
        updated,
        some.map((h) => JSON.stringify(h.reasons)),
      ],
    );
  }
  await db.query(`ANALYZE`);
  const accounts: { n: number }[] = await db.query(`SELECT count(*)::int AS n FROM platform_accounts`);
  const log: { n: number; mb: number; reasons_kb: number }[] = await db.query(
    `SELECT count(*)::int AS n, pg_total_relation_size('reconcile_log') / 1048576 AS mb, avg(pg_column_size(reasons))::int / 1024.0 AS reasons_kb FROM reconcile_log`,
  );
  console.log(
    `${accounts[0]!.n.toLocaleString()} platform accounts; ${log[0]!.n.toLocaleString()} log entries, ${log[0]!.mb} MB with their reasons (${Number(log[0]!.reasons_kb).toFixed(2)} kB each, stored)`,
  );

  const options = { db, desired: DesiredAccess.recordedOnly("mapping.yaml") };
  const timed = async <T>(fn: () => Promise<T>): Promise<[T, number]> => {
    const started = performance.now();
    const result = await fn();
    return [result, (performance.now() - started) / 1000];
  };
  let missed = 0;
  const judge = (what: string, ok: boolean, detail: string) => {
    if (!ok) missed++;
    console.log(`${what.padEnd(34)} ${detail}   ${ok ? "OK" : "MISSED"}`);
  };
  const line = (what: string, seconds: number, target: number, extra = "") =>
    judge(what, seconds < target, `${seconds.toFixed(3).padStart(7)} s   (target < ${target} s)${extra}`);

  // The report's size read independently of it: one row per user × grant (docs/access-review.md),
  // counted in SQL over every account's applied state, which is also its state 20 days ago (the
  // seeded create 30 days ago applied the same state as the update 10 days ago).
  const grants: { n: number }[] = await db.query(
    `SELECT coalesce(sum(
              jsonb_array_length(a.last_applied->'companyPermissions')
            + (SELECT coalesce(sum(jsonb_array_length(w->'appGroupPermissions') + jsonb_array_length(w->'appGroupPermissionSets')
                 + (SELECT coalesce(sum(jsonb_array_length(t->'teamPermissions')), 0) FROM jsonb_array_elements(w->'team') t)), 0)
                 FROM jsonb_array_elements(a.last_applied->'workspaces') w)
            + CASE WHEN coalesce(a.last_applied->>'department', '') <> '' THEN 1 ELSE 0 END), 0)::int AS n
       FROM platform_accounts a WHERE a.state = 'active'`,
  );
  const expectedRows = grants[0]!.n;

  await accessPage(options, {}, undefined, 100); // warm the pool and the parsed mapping
  const [page, pageSeconds] = await timed(() => accessPage(options, {}, undefined, 100));
  line(`first page (${page.rows.length} rows)`, pageSeconds, 1);
  const [filtered, filteredSeconds] = await timed(() =>
    accessPage(options, { workspace: "Workspace 3" }, undefined, 100),
  );
  line(`first page, one workspace (${filtered.rows.length})`, filteredSeconds, 1);
  const [admins, adminsSeconds] = await timed(() => accessPage(options, { admins: true }, undefined, 100));
  line(`first page, admins everywhere (${admins.rows.length})`, adminsSeconds, 1);
  const asOf = new Date(Date.now() - 20 * 86_400_000);
  const [past, pastSeconds] = await timed(() => accessPage(options, { at: asOf }, undefined, 100));
  const applied = past.rows.filter((r) => r.reasonsAsOf === "applied").length;
  line(
    `first page as of 20 days ago (${past.rows.length})`,
    pastSeconds,
    1,
    `   reasons as applied: ${applied}/${past.rows.length}`,
  );
  const [totals, totalsSeconds] = await timed(() => accessTotals(options, {}));
  line(`totals (${totals.length} workspace × permission)`, totalsSeconds, 1);

  for (const at of [undefined, asOf]) {
    const mb = (n: number) => Math.round(n / 1024 / 1024);
    const exportOnce = () => {
      let bytes = 0;
      // CSV records counted in what arrived (line ends outside quotes), not taken from the writer.
      let records = 0;
      let quoted = false;
      const sink = new Writable({
        highWaterMark: 1 << 20,
        write(chunk: Buffer, _enc, done) {
          bytes += chunk.length;
          for (const byte of chunk) {
            if (byte === 0x22) quoted = !quoted;
            else if (byte === 0x0a && !quoted) records++;
          }
          setImmediate(done); // a consumer that takes its time, so backpressure is exercised
        },
      });
      return writeAccessReport(options, at ? { at } : {}, "csv", sink).then((rows) => ({
        rows,
        bytes,
        received: records - 1, // the header
      }));
    };
    // Timed on its own: the memory pass below forces collections, which would slow it.
    const baseRss = process.memoryUsage().rss;
    let peakRss = baseRss;
    const rssSampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);
    const [{ rows, bytes, received }, seconds] = await timed(exportOnce);
    clearInterval(rssSampler);
    // RSS says what the process holds, garbage included; the live heap after a full collection
    // (each second, `--expose-gc`) says what the export keeps: bounded means a couple of batches of
    // accounts, whatever the report's size.
    const gc = (globalThis as { gc?: () => void }).gc;
    let live = "; run with --expose-gc for the live heap";
    let liveHeapMb: number | undefined;
    if (gc) {
      gc();
      const baseHeap = process.memoryUsage().heapUsed;
      let peakLiveHeap = baseHeap;
      const heapSampler = setInterval(() => {
        gc();
        peakLiveHeap = Math.max(peakLiveHeap, process.memoryUsage().heapUsed);
      }, 1_000);
      await exportOnce();
      clearInterval(heapSampler);
      liveHeapMb = mb(peakLiveHeap - baseHeap);
      live = `; live heap after GC peak +${liveHeapMb} MB`;
    }
    const label = `CSV export${at ? " as of 20 days ago" : ""}`;
    line(
      `${label} (${rows.toLocaleString()} rows)`,
      seconds,
      30,
      `   ${mb(bytes)} MB written; RSS peak +${mb(peakRss - baseRss)} MB over ${mb(baseRss)} MB${live}`,
    );
    judge(
      `${label}: rows`,
      received === expectedRows && rows === expectedRows,
      `${received.toLocaleString()} received, ${rows.toLocaleString()} by the writer, ${expectedRows.toLocaleString()} grants held`,
    );
    judge(
      `${label}: memory`,
      liveHeapMb !== undefined && liveHeapMb < 64,
      liveHeapMb === undefined
        ? "live heap not measured (needs --expose-gc, as npm run bench:access runs it)"
        : `live heap peak +${liveHeapMb} MB (target: bounded, < 64 MB)`,
    );
  }
  await db.close();
  if (missed) {
    console.log(`${missed} target(s) MISSED`);
    process.exitCode = 1;
  }
} finally {
  await pg.stop();
  await rm(dir, { recursive: true, force: true });
}
