/**
 * bench/campaign-counts-previous: the campaign code that came before this tree's partitions and
 * kept counts, run for real beside this tree, on this tree's schema, as a rolling deploy or a
 * rollback would run it (docs/operations.md, "Upgrades"). The previous code is the parent of the
 * commit that added migration 1920 (campaign-partitions): 0.2.0 (4ed736d) had no campaigns at all,
 * so the code a replica of the release before would run is that unreleased commit's, not 0.2.0's.
 *
 *   npm run bench:campaign-previous [-- --commit REF]
 *
 * Its tree is extracted with `git archive` into a temporary directory (this checkout's node_modules
 * beside it); this tree's service migrates an embedded PostgreSQL and provisions accounts on the
 * emulator. Then, each count checked against the items' own (SQL here, no product code):
 *   1. the previous code starts a campaign (its items go through campaign_items, to the default
 *      partition) and decides on three of its items;
 *   2. this tree decides on two more of that campaign's items;
 *   3. this tree starts a campaign (its own partition) and the previous code decides on it.
 * Exits non-zero when a count differs or a step fails.
 */
import { execFileSync } from "node:child_process";
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { systemClock } from "../src/clock.js";
import { loadEnv } from "../src/config/env.js";
import { startEmbeddedPostgres } from "../src/db/embedded.js";
import { startEmulator } from "../src/emulator/index.js";
import { validate } from "../src/http/validate.js";
import { setLogLevel } from "../src/logging/logger.js";
import {
  campaignDetail,
  decideItems,
  decideSchema,
  startCampaign,
  startCampaignSchema,
} from "../src/review/campaigns/index.js";
import { startService } from "../src/service.js";
import { waitForQueueIdle } from "../test/support/queue.js";
import { keepAliveClient } from "./support/httpClient.js";
import { benchUser } from "./support/scimUser.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const PARTITIONS_MIGRATION = "migrations/1763700001920-campaign-partitions.ts";
const git = (...args: string[]) => execFileSync("git", ["-C", REPO, ...args], { encoding: "utf8" }).trim();

const { values } = parseArgs({ options: { commit: { type: "string" } } });
const introducing = git("log", "--diff-filter=A", "--format=%H", "--", PARTITIONS_MIGRATION).split("\n").at(-1);
if (!values.commit && !introducing) throw new Error(`no commit in this clone added ${PARTITIONS_MIGRATION}`);
const previous = git("rev-parse", "--verify", `${values.commit ?? `${introducing}^`}^{commit}`);
setLogLevel("error");

const TOKEN = "bench-previous-campaigns-0123456789abcdef";
const MAPPING = `department: { default: engineering }
rules:
  - description: Marketing
    group: Marketing
    workspaces:
      - name: EU Production
        permissions: [basic_access, send_campaigns_canvases]
        teams:
          - name: Lifecycle
            permissions: [basic_access]
`;
const ADMIN = { name: "admin@example.com", role: "admin" };

/** The previous code's own start and decide, in a process of its own, run from its extracted tree. */
const DRIVER = `import { openDatabase } from "./src/db/dataSource.js";
import { decideItems, startCampaign } from "./src/admin/campaigns/index.js";
import { systemClock } from "./src/clock.js";
const [url, step, arg] = process.argv.slice(2);
const db = await openDatabase({ url, poolSize: 2, applicationName: "scim-connector:previous-release" });
const deps = { db, clock: systemClock };
try {
  if (step === "start") {
    const dueAt = new Date(Date.now() + 86_400_000).toISOString();
    const started = await startCampaign(deps, { name: arg, scope: { kind: "everything" }, dueAt, fallbackReviewer: "owner@example.com" }, "admin@example.com");
    console.log(JSON.stringify({ id: started.id, items: started.items }));
  } else {
    const { id, items, decision } = JSON.parse(arg);
    const decided = await decideItems(deps, id, { name: "admin@example.com", role: "admin" }, { items, decision, comment: "previous release" });
    console.log(JSON.stringify(decided));
  }
} finally {
  await db.close();
}
`;

const dir = await mkdtemp(path.join(os.tmpdir(), "scim-previous-campaigns-"));
await chmod(dir, 0o755);
const code = path.join(dir, "code");
await mkdir(code);
execFileSync("tar", ["-x", "-C", code], {
  input: execFileSync("git", ["-C", REPO, "archive", "--format=tar", previous], { maxBuffer: 1 << 30 }),
});
await symlink(path.join(REPO, "node_modules"), path.join(code, "node_modules"));
await writeFile(path.join(code, "previous-driver.ts"), DRIVER);
const mappingFile = path.join(dir, "mapping.yaml");
await writeFile(mappingFile, MAPPING);

const pg = await startEmbeddedPostgres(path.join(dir, "pg"), { persistent: false, throwaway: true });
const emulator = await startEmulator({ permissions: "legacy" });
const service = await startService({
  env: loadEnv({
    PORT: "0",
    HOST: "127.0.0.1",
    SCIM_TOKEN: TOKEN,
    MAPPING_FILE: mappingFile,
    RECONCILE_POLL_MS: "50",
    RECONCILE_SETTLE_MS: "0",
    RESYNC_CRON: "off",
    LOG_LEVEL: "error",
  }),
  databaseUrl: pg.url,
  platform: { url: emulator.url, scimToken: "dev-scim-token", apiKey: undefined, requestOrigin: "bench" },
});
const deps = { db: service.db, clock: systemClock };
const previousCode = (step: string, arg: string) =>
  JSON.parse(
    execFileSync(process.execPath, ["--import", "tsx", "previous-driver.ts", pg.url, step, arg], {
      cwd: code,
      encoding: "utf8",
    }).trim(),
  );
let failed = false;

/** The product's counts for the campaign against the items' own, and where its items are stored. */
async function check(label: string, id: string): Promise<void> {
  const [own] = (await service.db.query(
    `SELECT count(*)::int AS items, count(*) FILTER (WHERE decision IS NULL)::int AS open,
            count(*) FILTER (WHERE decision = 'keep')::int AS kept, count(*) FILTER (WHERE decision = 'revoke')::int AS revoked,
            string_agg(DISTINCT tableoid::regclass::text, ', ') AS stored
       FROM campaign_items WHERE campaign_id = $1`,
    [id],
  )) as { items: number; open: number; kept: number; revoked: number; stored: string }[];
  const { items, open, kept, revoked } = (await campaignDetail(deps, id)).counts;
  const shown = { items, open, kept, revoked };
  const truth = { items: own!.items, open: own!.open, kept: own!.kept, revoked: own!.revoked };
  const ok = JSON.stringify(shown) === JSON.stringify(truth) && truth.items > 0;
  failed ||= !ok;
  console.log(
    `${label}: counts ${JSON.stringify(shown)}, items' own ${JSON.stringify(truth)} (stored in ${own!.stored})   ${ok ? "OK" : "MISSED"}`,
  );
}

const itemsOf = async (id: string) =>
  (
    (await service.db.query(`SELECT id FROM campaign_items WHERE campaign_id = $1 ORDER BY id`, [id])) as {
      id: string;
    }[]
  ).map((r) => r.id);

try {
  console.log(`previous code: ${previous.slice(0, 10)} (the parent of the commit that added ${PARTITIONS_MIGRATION})`);
  const http = keepAliveClient(service.url, 4);
  const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/scim+json" };
  const members: { value: string }[] = [];
  for (let i = 0; i < 6; i++) {
    const res = await http.call("POST", "/scim/v2/Users", headers, JSON.stringify(benchUser(`c${i}@example.com`)));
    if (res.status !== 201) throw new Error(`create c${i}: ${res.status} ${res.text}`);
    members.push({ value: (JSON.parse(res.text) as { id: string }).id });
  }
  const group = { schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"], displayName: "Marketing", members };
  const res = await http.call("POST", "/scim/v2/Groups", headers, JSON.stringify(group));
  if (res.status !== 201) throw new Error(`group: ${res.status} ${res.text}`);
  http.close();
  await waitForQueueIdle(service.db, { timeoutMs: 60_000 });

  // 1. The previous code starts a campaign and decides on three of its items.
  const old = previousCode("start", "Started by the previous code") as { id: string; items: number };
  await check("1. started by the previous code", old.id);
  const oldItems = await itemsOf(old.id);
  previousCode("decide", JSON.stringify({ id: old.id, items: oldItems.slice(0, 2), decision: "keep" }));
  previousCode("decide", JSON.stringify({ id: old.id, items: oldItems.slice(2, 3), decision: "revoke" }));
  await check("   decided by the previous code (2 kept, 1 revoked)", old.id);

  // 2. This tree decides on two more.
  await decideItems(deps, old.id, ADMIN, validate(decideSchema, { items: oldItems.slice(3, 5), decision: "keep" }));
  await check("2. then by this tree (2 more kept)", old.id);

  // 3. This tree starts a campaign; the previous code decides on it.
  const dueAt = new Date(Date.now() + 86_400_000).toISOString();
  const input = {
    name: "Started by this tree",
    scope: { kind: "everything" },
    dueAt,
    fallbackReviewer: "owner@example.com",
  };
  const current = await startCampaign(deps, validate(startCampaignSchema, input), ADMIN.name);
  const currentItems = await itemsOf(current.id);
  previousCode("decide", JSON.stringify({ id: current.id, items: currentItems.slice(0, 3), decision: "revoke" }));
  await check("3. started by this tree, decided by the previous code (3 revoked)", current.id);
} catch (error) {
  failed = true;
  console.error(error);
} finally {
  await service.close();
  await emulator.close();
  await pg.stop();
  await rm(dir, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
