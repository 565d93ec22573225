/**
 * Budget efficiency: a week of IdP churn for 5,000 users in 60 groups, pushed through the real
 * SCIM API into the connector (embedded PostgreSQL, the emulator as the platform, all in this
 * process). After each simulated day the reconciler converges; the bench then compares the
 * platform SCIM calls it spent with the minimum needed, computed independently from the bench's
 * own model of the IdP: the number of users whose desired dashboard user changed since the last
 * convergence point (creates + updates + deletes). Beside it: what a naive connector that
 * forwards every IdP write touching a user (one platform call each) would have spent.
 *
 *   npm run bench:budget [-- --users 5000 --days 7 --concurrency 16 --live]
 *
 * --live keeps the reconciler running while the day's writes arrive (no batching by the bench):
 * intermediate states (a move is a remove and then an add) may then be reconciled too.
 */
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { isDeepStrictEqual, parseArgs } from "node:util";
import { loadEnv } from "../src/config/env.js";
import { parseMapping } from "../src/config/mapping.js";
import { startEmbeddedPostgres } from "../src/db/embedded.js";
import { startEmulator } from "../src/emulator/index.js";
import { setLogLevel } from "../src/logging/logger.js";
import { desiredDashboardUser } from "../src/mapping/desired.js";
import type { DesiredDashboardUser } from "../src/mapping/types.js";
import { fromPlatformResource } from "../src/platform/scim.js";
import { startService } from "../src/service.js";

const { values } = parseArgs({
  options: {
    users: { type: "string", default: "5000" },
    days: { type: "string", default: "7" },
    concurrency: { type: "string", default: "16" },
    seed: { type: "string", default: "42" },
    live: { type: "boolean", default: false },
  },
});
const USERS = Number(values.users);
const DAYS = Number(values.days);
const CONCURRENCY = Number(values.concurrency);
const TOKEN = "bench-idp-token-0123456789abcdef";
const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";
const PATCH_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

setLogLevel("warn");

// ---------------------------------------------------------------------------------------------
// The IdP as the bench models it (the source of the independent minimum).

type Group = { index: number; id: string; displayName: string; externalId: string | null; mapped: boolean };
type User = { index: number; id: string; userName: string; givenName: string; familyName: string; active: boolean; groups: Set<number> };

const DEPARTMENTS = ["agency", "bi", "c_suite", "finance", "marketing", "pm"];
/** 0-29 matched by externalId (renames are free), 30-49 by name, 50-54 by pattern, 55-59 unmapped. */
function groupDefinition(k: number): Omit<Group, "id"> {
  if (k < 30) return { index: k, displayName: `Team ${k}`, externalId: `00g-team-${k}`, mapped: true };
  if (k < 50) return { index: k, displayName: `Dept ${k}`, externalId: null, mapped: true };
  if (k < 55) return { index: k, displayName: `Analysts-${k}`, externalId: null, mapped: true };
  return { index: k, displayName: `Social ${k}`, externalId: null, mapped: false };
}
const PRIMARY = Array.from({ length: 50 }, (_, k) => k);
const ANALYSTS = [50, 51, 52, 53, 54];
const SOCIAL = [55, 56, 57, 58, 59];

function mappingYaml(): string {
  const lines = ["department:", "  default: engineering", "  fromAttribute: false", `  allowed: [engineering, ${DEPARTMENTS.join(", ")}]`, "rules:"];
  for (let k = 0; k < 30; k++) {
    lines.push(
      `  - groupExternalId: 00g-team-${k}`,
      "    workspaces:",
      `      - name: Workspace ${k % 5}`,
      `        permissions: [basic_access${k % 3 === 0 ? ", send_campaigns_canvases" : ""}]`,
      "        teams:",
      `          - name: Team ${k}`,
      "            permissions: [basic_access]",
    );
  }
  for (let k = 30; k < 50; k++) {
    lines.push(
      `  - group: Dept ${k}`,
      `    department: ${DEPARTMENTS[k % DEPARTMENTS.length]}`,
      "    workspaces:",
      `      - name: Workspace ${k % 5}`,
      `        permissions: [basic_access${k % 2 ? ", export_user_data" : ""}]`,
    );
  }
  lines.push('  - groupPattern: "^Analysts-"', "    workspaces:", "      - name: Analytics", "        permissions: [export_user_data]");
  return `${lines.join("\n")}\n`;
}

/** mulberry32: a small seeded generator, so every run replays the same week. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = prng(Number(values.seed));
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const sample = <T>(items: readonly T[], n: number): T[] => {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy.slice(0, n);
};

// ---------------------------------------------------------------------------------------------
// The stack: embedded PostgreSQL, the emulator (daily limit lifted), the connector.

const dir = await mkdtemp(path.join(os.tmpdir(), "scim-connector-bench-budget-"));
await chmod(dir, 0o755);
const mappingFile = path.join(dir, "mapping.yaml");
await writeFile(mappingFile, mappingYaml());
const mapping = parseMapping(mappingYaml(), "bench mapping");
const pg = await startEmbeddedPostgres(path.join(dir, "data"), { persistent: false, throwaway: true });
const emulator = await startEmulator({ scimDailyLimit: 1_000_000_000 });
const service = await startService({
  env: loadEnv({
    PORT: "0",
    HOST: "127.0.0.1",
    SCIM_TOKEN: TOKEN,
    MAPPING_FILE: mappingFile,
    // The bench measures calls per change, not the daily cap: the ledger must never defer work here.
    PLATFORM_SCIM_DAILY_BUDGET: "100000000",
    RECONCILE_WORKERS: "4",
    RECONCILE_POLL_MS: "100",
    DATABASE_POOL_SIZE: "20",
    LOG_LEVEL: "warn",
  }),
  databaseUrl: pg.url,
  platform: { url: emulator.url, scimToken: "dev-scim-token", apiKey: undefined, requestOrigin: "bench" },
  workers: false,
});
const worker = service.reconciliation!.worker;

async function scim(method: string, p: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${service.url}/scim/v2${p}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/scim+json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${text.slice(0, 300)}`);
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** Runs the day's requests, at most CONCURRENCY at once, in order per user/group key. */
async function push(requests: { key: string; send: () => Promise<unknown> }[]): Promise<void> {
  const chains = new Map<string, (() => Promise<unknown>)[]>();
  for (const r of requests) chains.set(r.key, [...(chains.get(r.key) ?? []), r.send]);
  const queue = [...chains.values()];
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let chain = queue.shift(); chain; chain = queue.shift()) for (const send of chain) await send();
    }),
  );
}

const userResource = (u: User) => ({
  schemas: [USER_SCHEMA],
  userName: u.userName,
  name: { givenName: u.givenName, familyName: u.familyName },
  emails: [{ value: u.userName, type: "work", primary: true }],
  active: u.active,
});

// ---------------------------------------------------------------------------------------------
// Measuring.

const groups: Group[] = [];
const users: User[] = [];
let naive = 0;
let idpWrites = 0;

function desiredOf(u: User): DesiredDashboardUser | null {
  const gs = [...u.groups].sort((a, b) => a - b).map((k) => ({ displayName: groups[k]!.displayName, externalId: groups[k]!.externalId }));
  return desiredDashboardUser({ userName: u.userName, active: u.active, givenName: u.givenName, familyName: u.familyName }, gs, mapping);
}

function snapshot(): Map<string, DesiredDashboardUser | null> {
  return new Map(users.map((u) => [u.userName, desiredOf(u)]));
}

function minimumBetween(before: Map<string, DesiredDashboardUser | null>, after: Map<string, DesiredDashboardUser | null>) {
  let creates = 0;
  let updates = 0;
  let deletes = 0;
  for (const [name, now] of after) {
    const was = before.get(name) ?? null;
    if (!was && now) creates++;
    else if (was && !now) deletes++;
    else if (was && now && !isDeepStrictEqual(was, now)) updates++;
  }
  return { creates, updates, deletes, total: creates + updates + deletes };
}

function scimCalls(): number {
  let n = 0;
  for (const [key, count] of emulator.state.requestCounts) if (key.includes("/scim/v2/Users")) n += count;
  return n;
}

async function converge(): Promise<number> {
  const started = Date.now();
  if (!values.live) await worker.start();
  for (;;) {
    const rows: { n: number; parked: number }[] = await service.db.query(
      `SELECT count(*)::int AS n, count(*) FILTER (WHERE parked_at IS NOT NULL)::int AS parked FROM reconcile_queue`,
    );
    if (rows[0]!.n === rows[0]!.parked) {
      if (rows[0]!.parked) console.warn(`  ${rows[0]!.parked} users parked`);
      break;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  if (!values.live) await worker.stop();
  return Date.now() - started;
}

/** The emulator's accounts against the model: every difference is a correctness failure. */
function mismatches(expected: Map<string, DesiredDashboardUser | null>): number {
  const held = new Map<string, DesiredDashboardUser>();
  for (const account of emulator.state.dashboardUsers.byId.values()) held.set(account.userName.toLowerCase(), fromPlatformResource(account));
  let wrong = 0;
  for (const [name, want] of expected) {
    const got = held.get(name.toLowerCase()) ?? null;
    if (!isDeepStrictEqual(got, want)) wrong++;
    held.delete(name.toLowerCase());
  }
  return wrong + held.size;
}

// ---------------------------------------------------------------------------------------------
// Day 0: the initial load. Days 1..n: churn.

function newUser(index: number): User {
  const groupsOf = new Set<number>();
  if (index % 20 !== 19) groupsOf.add(pick(PRIMARY)); // one in twenty is in no mapped group
  if (random() < 0.2) groupsOf.add(pick(ANALYSTS));
  if (random() < 0.5) groupsOf.add(pick(SOCIAL));
  return { index, id: "", userName: `user${String(index).padStart(5, "0")}@example.com`, givenName: `Given${index}`, familyName: `Family${index}`, active: true, groups: groupsOf };
}

async function dayZero(): Promise<void> {
  for (let k = 0; k < 60; k++) groups.push({ ...groupDefinition(k), id: "" });
  for (let i = 0; i < USERS; i++) users.push(newUser(i));
  await push(
    users.map((u) => ({
      key: u.userName,
      send: async () => {
        u.id = (await scim("POST", "/Users", userResource(u))).body.id;
        idpWrites++;
        naive++;
      },
    })),
  );
  await push(
    groups.map((g) => ({
      key: g.displayName,
      send: async () => {
        const members = users.filter((u) => u.groups.has(g.index)).map((u) => ({ value: u.id }));
        g.id = (await scim("POST", "/Groups", { schemas: [GROUP_SCHEMA], displayName: g.displayName, ...(g.externalId ? { externalId: g.externalId } : {}), members })).body.id;
        idpWrites++;
        naive += members.length;
      },
    })),
  );
}

function churn(day: number): { key: string; send: () => Promise<unknown> }[] {
  const requests: { key: string; send: () => Promise<unknown> }[] = [];
  const active = () => users.filter((u) => u.active);
  const write = (key: string, touches: number, send: () => Promise<unknown>) => {
    idpWrites++;
    naive += touches;
    requests.push({ key, send });
  };
  const memberOp = (u: User, k: number, op: "add" | "remove") => {
    if (op === "add") u.groups.add(k);
    else u.groups.delete(k);
    const g = groups[k]!;
    write(u.userName, 1, () =>
      scim("PATCH", `/Groups/${g.id}`, {
        schemas: [PATCH_SCHEMA],
        Operations: op === "add" ? [{ op: "add", path: "members", value: [{ value: u.id }] }] : [{ op: "remove", path: `members[value eq "${u.id}"]` }],
      }),
    );
  };

  // Okta re-sends unchanged users (profile push, "re-activate", imports): a full PUT each.
  for (const u of sample(active(), Math.round(USERS * 0.2))) {
    const body = userResource(u);
    write(u.userName, 1, () => scim("PUT", `/Users/${u.id}`, body));
  }
  // Real profile edits: a new family name is part of the dashboard user.
  for (const u of sample(active(), Math.round(USERS * 0.008))) {
    u.familyName = `${u.familyName}-d${day}`;
    const body = userResource(u);
    write(u.userName, 1, () => scim("PUT", `/Users/${u.id}`, body));
  }
  // Team moves: out of the primary group, into another (two group PATCHes, as Okta pushes them).
  for (const u of sample(active().filter((x) => [...x.groups].some((k) => k < 50)), Math.round(USERS * 0.05))) {
    const from = [...u.groups].find((k) => k < 50)!;
    const to = pick(PRIMARY.filter((k) => k !== from));
    memberOp(u, from, "remove");
    memberOp(u, to, "add");
  }
  // Analyst and social-group comings and goings.
  for (const u of sample(active(), Math.round(USERS * 0.012))) {
    const k = [...u.groups].find((g) => ANALYSTS.includes(g));
    memberOp(u, k ?? pick(ANALYSTS), k === undefined ? "add" : "remove");
  }
  for (const u of sample(active(), Math.round(USERS * 0.02))) {
    const k = [...u.groups].find((g) => SOCIAL.includes(g));
    memberOp(u, k ?? pick(SOCIAL), k === undefined ? "add" : "remove");
  }
  // Group renames that mean nothing to the mapping (matched by externalId or pattern, or unmapped).
  for (const k of sample([...Array.from({ length: 30 }, (_, i) => i), ...ANALYSTS, ...SOCIAL], 3)) {
    const g = groups[k]!;
    g.displayName = k < 30 ? `Team ${k} (${day})` : k < 55 ? `Analysts-${k}-r${day}` : `Social ${k} r${day}`;
    const members = users.filter((u) => u.groups.has(k)).length;
    const displayName = g.displayName;
    write(`group:${k}`, members, () => scim("PATCH", `/Groups/${g.id}`, { schemas: [PATCH_SCHEMA], Operations: [{ op: "replace", path: "displayName", value: displayName }] }));
  }
  // Leavers: deactivated (Okta never deletes).
  for (const u of sample(active(), Math.round(USERS * 0.005))) {
    u.active = false;
    write(u.userName, 1, () => scim("PATCH", `/Users/${u.id}`, { schemas: [PATCH_SCHEMA], Operations: [{ op: "replace", value: { active: false } }] }));
  }
  // Joiners: created, then added to their groups.
  for (let n = 0; n < Math.round(USERS * 0.005); n++) {
    const u = newUser(users.length);
    users.push(u);
    const memberships = [...u.groups];
    u.groups = new Set();
    write(u.userName, 1, async () => (u.id = (await scim("POST", "/Users", userResource(u))).body.id));
    for (const k of memberships) memberOp(u, k, "add");
  }
  return requests;
}

// ---------------------------------------------------------------------------------------------

type Row = { day: string; writes: number; naive: number; minimum: number; spent: number; detail: string; seconds: number; wrong: number };
const rows: Row[] = [];
let previous = new Map<string, DesiredDashboardUser | null>();
if (values.live) await worker.start();

for (let day = 0; day <= DAYS; day++) {
  const [writes0, naive0, calls0] = [idpWrites, naive, scimCalls()];
  const pushStarted = Date.now();
  if (day === 0) await dayZero();
  else await push(churn(day));
  const pushMs = Date.now() - pushStarted;
  const convergeMs = await converge();
  const now = snapshot();
  const min = minimumBetween(previous, now);
  previous = now;
  rows.push({
    day: day === 0 ? "0 (load)" : String(day),
    writes: idpWrites - writes0,
    naive: naive - naive0,
    minimum: min.total,
    spent: scimCalls() - calls0,
    detail: `${min.creates}c ${min.updates}u ${min.deletes}d`,
    seconds: Math.round((pushMs + convergeMs) / 100) / 10,
    wrong: mismatches(now),
  });
  const r = rows[rows.length - 1]!;
  console.log(`day ${r.day}: ${r.writes} IdP writes, minimum ${r.minimum} (${r.detail}), spent ${r.spent}, naive ${r.naive}; ${r.wrong} accounts differ from the model; ${r.seconds}s`);
}

const ratio = (a: number, b: number) => (b === 0 ? (a === 0 ? "1.00" : "∞") : (a / b).toFixed(2));
const week = rows.slice(1);
const sum = (xs: Row[], f: (r: Row) => number) => xs.reduce((n, r) => n + f(r), 0);

console.log(`\nBudget efficiency: ${USERS} users, 60 groups, ${DAYS} days of churn${values.live ? " (reconciler live during pushes)" : " (reconciler converges after each day)"}\n`);
console.log("day        IdP writes  minimum (c/u/d)        spent  spent÷min   naive  naive÷min  wrong");
for (const r of rows) {
  console.log(
    `${r.day.padEnd(10)} ${String(r.writes).padStart(10)}  ${String(r.minimum).padStart(7)} ${`(${r.detail})`.padEnd(16)} ${String(r.spent).padStart(6)}  ${ratio(r.spent, r.minimum).padStart(9)}  ${String(r.naive).padStart(6)}  ${ratio(r.naive, r.minimum).padStart(9)}  ${String(r.wrong).padStart(5)}`,
  );
}
const [wMin, wSpent, wNaive, wWrites] = [sum(week, (r) => r.minimum), sum(week, (r) => r.spent), sum(week, (r) => r.naive), sum(week, (r) => r.writes)];
console.log(`\nThe week (days 1-${DAYS}): ${wWrites} IdP writes; minimum ${wMin} platform calls`);
console.log(`  connector: ${wSpent} calls spent, ${ratio(wSpent, wMin)} × the minimum (target 1.00)`);
console.log(`  naive forwarder: ${wNaive} calls, ${ratio(wNaive, wMin)} × the minimum`);
const allMin = sum(rows, (r) => r.minimum);
console.log(`With the initial load: connector ${ratio(sum(rows, (r) => r.spent), allMin)} ×, naive ${ratio(sum(rows, (r) => r.naive), allMin)} × the minimum of ${allMin}`);
const wrong = sum(rows, (r) => r.wrong);
console.log(wrong === 0 ? "Every account on the platform matched the model after every day." : `${wrong} account differences from the model: FAILED`);

if (values.live) await worker.stop();
await service.close();
await emulator.close();
await pg.stop();
await rm(dir, { recursive: true, force: true });
process.exitCode = wrong === 0 ? 0 : 1;
