/**
 * bench/granular-switch: what the move to the platform's granular permissions costs in platform
 * calls, counted on the emulator's own journal (never through the connector's code).
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
 * Exits non-zero when a goal is missed.
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

/** Group k grants basic_access in Workspace k%4, plus send_campaigns_canvases for even k, plus a team for every third. */
function legacyMapping(): string {
  const lines = ["department: { default: engineering }", "rules:"];
  for (let k = 0; k < GROUPS; k++) {
    lines.push(
      `  - description: Group ${k}`,
      `    group: Group ${k}`,
      "    workspaces:",
      `      - name: Workspace ${k % 4}`,
      `        permissions: [basic_access${k % 2 === 0 ? ", send_campaigns_canvases" : ""}]`,
      ...(k % 3 === 0
        ? ["        teams:", `          - name: Team ${k}`, "            permissions: [basic_access]"]
        : []),
    );
  }
  return `${lines.join("\n")}\n`;
}

/** User i is in group i % GROUPS, and every 7th user also in group (i + 1) % GROUPS. */
const groupsOf = (i: number) => (i % 7 === 0 ? [i % GROUPS, (i + 1) % GROUPS] : [i % GROUPS]);

const dir = await mkdtemp(path.join(os.tmpdir(), "scim-bench-granular-"));
await chmod(dir, 0o755);
const mappingFile = path.join(dir, "mapping.yaml");
await writeFile(mappingFile, legacyMapping());
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

async function idle(label: string): Promise<void> {
  const started = Date.now();
  for (;;) {
    const [row] = (await service.db.query(
      `SELECT count(*) FILTER (WHERE parked_at IS NULL AND not_before <= now() + interval '2 minutes')::int AS n FROM reconcile_queue`,
    )) as { n: number }[];
    if (row!.n === 0) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  console.log(`  ${label}: converged in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

try {
  console.log(`provisioning ${USERS.toLocaleString()} users in ${GROUPS} groups under a legacy mapping…`);
  const ids: string[] = new Array(USERS);
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < USERS; i = next++) {
        const res = await http.call("POST", "/scim/v2/Users", headers, JSON.stringify(benchUser(`u${i}@example.com`)));
        if (res.status !== 201) throw new Error(`create u${i}: ${res.status} ${res.text}`);
        ids[i] = (JSON.parse(res.text) as { id: string }).id;
      }
    }),
  );
  const members = Array.from({ length: GROUPS }, () => [] as string[]);
  ids.forEach((id, i) => groupsOf(i).forEach((k) => members[k]!.push(id)));
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
  await idle("legacy provisioning");
  console.log(`  ${emulator.state.dashboardUsers.byId.size.toLocaleString()} accounts on the emulator`);

  // The platform migrates the company (as POST /_emulator/permissions does).
  const migrated = await fetch(`${emulator.url}/_emulator/permissions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "granular", legacy: "accepted" }),
  });
  if (!migrated.ok) throw new Error(`emulator migration: ${migrated.status}`);

  // 1. The switch to the translated mapping.
  const translated = migrateMapping(legacyMapping());
  if (translated.outcome !== "migrated") throw new Error(`mapping migrate: ${JSON.stringify(translated)}`);
  await writeFile(mappingFile, translated.text);
  let mark = journal.length;
  let started = performance.now();
  await service.mappings.reload(service.db);
  await idle("switch to granular");
  const switchCalls = journal.length - mark;
  const switchSeconds = (performance.now() - started) / 1000;

  // 2. A one-rule change: Group 5's rule gains view_push_settings.
  const changedGroup = 5 % GROUPS;
  const expected = ids.filter((_, i) => groupsOf(i).includes(changedGroup)).length;
  const changed = translated.text.replace(
    new RegExp(
      `(group: Group ${changedGroup}\\n    workspaces:\\n      - name: Workspace \\d\\n        permissions:\\n)`,
    ),
    "$1          - view_push_settings\n",
  );
  if (changed === translated.text) throw new Error("the one-rule change did not apply to the migrated text");
  await writeFile(mappingFile, changed);
  mark = journal.length;
  started = performance.now();
  await service.mappings.reload(service.db);
  await idle("one-rule change");
  const ruleCalls = journal.slice(mark);
  const ruleSeconds = (performance.now() - started) / 1000;
  const puts = ruleCalls.filter((e) => e.method === "PUT").length;

  console.log(
    `\nswitch to the translated mapping: ${switchCalls} calls (goal 0; a naive re-send is ${USERS.toLocaleString()})   ${switchSeconds.toFixed(1)} s   ${switchCalls === 0 ? "OK" : "MISSED"}`,
  );
  console.log(
    `one-rule change (Group ${changedGroup}): ${ruleCalls.length} calls, ${puts} PUTs (goal exactly ${expected}, the group's members)   ${ruleSeconds.toFixed(1)} s   ${ruleCalls.length === expected && puts === expected ? "OK" : "MISSED"}`,
  );
  failed = switchCalls !== 0 || ruleCalls.length !== expected || puts !== expected;
} finally {
  http.close();
  await service.close();
  await emulator.close();
  await pg.stop();
  await rm(dir, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
