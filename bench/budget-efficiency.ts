/**
 * Budget efficiency: a week of IdP churn for 5,000 users in 60 groups, pushed through the real
 * SCIM API into the connector (embedded PostgreSQL, the emulator as the platform, all in this
 * process), against the minimum number of platform SCIM calls computed from the bench's own model
 * of the IdP and its own oracle of the mapping (bench/support/budgetWorld.ts).
 *
 *   npm run bench:budget [-- --users 5000 --days 7 --concurrency 16 --live]
 *   npm run bench:budget -- --idp okta|entra [--rate 3 --settle-ms 10000 --settle-max-ms 120000 --window both|on|off --budget N --reserve-percent 10]
 *
 * Batched days (the default): each day's writes arrive 16 at a time and the reconciler converges
 * after the day; the minimum is one call per user whose desired dashboard user differs between
 * two days. --live keeps the reconciler running during the pushes.
 *
 * A paced IdP (--idp): requests arrive one at a time at --rate per second, as the IdP sends them,
 * on a simulated clock (the worker runs pass by pass between requests, so a simulated week takes
 * minutes). Okta (push groups): users first, then each group empty, then one PATCH per member; in
 * the week, each admin action as it happens (its requests 2 s apart). Entra: the same initial
 * cycle in Entra's dialect; in the week, a cycle every 40 minutes sends the users' writes, then
 * the membership changes group by group. The minimum is one call per burst of a user's changes
 * whose desired dashboard user differs between its start and its end (a burst ends when the user
 * has been quiet longer than the settle window); the run is repeated with the window off.
 */
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { isDeepStrictEqual, parseArgs } from "node:util";
import type { Clock } from "../src/clock.js";
import { loadEnv } from "../src/config/env.js";
import { startEmbeddedPostgres } from "../src/db/embedded.js";
import { startEmulator, type RunningEmulator } from "../src/emulator/index.js";
import { setLogLevel } from "../src/logging/logger.js";
import type { DesiredDashboardUser } from "../src/mapping/types.js";
import { startService, type Service } from "../src/service.js";
import {
  ANALYSTS,
  groupDefinition,
  mappingYaml,
  oracleDesired,
  grantsOf,
  PRIMARY,
  prng,
  sameDesired,
  SOCIAL,
  takesAccessAway,
  type Group,
  type IdpEvent,
  type IdpRequest,
  type PacedRequest,
  type User,
  type UserState,
} from "./support/budgetWorld.js";

const { values } = parseArgs({
  options: {
    users: { type: "string", default: "5000" },
    days: { type: "string", default: "7" },
    concurrency: { type: "string", default: "16" },
    seed: { type: "string", default: "42" },
    live: { type: "boolean", default: false },
    idp: { type: "string" },
    rate: { type: "string", default: "3" },
    "settle-ms": { type: "string" },
    "settle-max-ms": { type: "string" },
    window: { type: "string", default: "both" },
    /** The connector's daily budget (PLATFORM_SCIM_DAILY_BUDGET); unlimited by default. A small one shows reductions with the ordinary budget spent. */
    budget: { type: "string", default: "100000000" },
    /** PLATFORM_SCIM_BUDGET_RESERVE_PERCENT with --budget (the share only reductions may spend). */
    "reserve-percent": { type: "string", default: "10" },
  },
});
const USERS = Number(values.users);
const DAYS = Number(values.days);
const CONCURRENCY = Number(values.concurrency);
const PACED = values.idp as "okta" | "entra" | undefined;
if (PACED !== undefined && PACED !== "okta" && PACED !== "entra")
  throw new Error(`--idp must be okta or entra (got ${PACED})`);
const RATE = Number(values.rate);
const DEFAULTS = loadEnv({});
const SETTLE_MS = Number(values["settle-ms"] ?? DEFAULTS.RECONCILE_SETTLE_MS);
const SETTLE_MAX_MS = Number(values["settle-max-ms"] ?? Math.max(SETTLE_MS, DEFAULTS.RECONCILE_SETTLE_MAX_MS));
const TOKEN = "bench-idp-token-0123456789abcdef";
const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";
const PATCH_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

setLogLevel("warn");

// ---------------------------------------------------------------------------------------------
// The stack: embedded PostgreSQL, the emulator (daily limit lifted), the connector.

/** Simulated time for the paced runs: it moves only when the bench moves it. */
class SimClock implements Clock {
  constructor(private t: number) {}
  now(): Date {
    return new Date(this.t);
  }
  set(t: number): void {
    if (t > this.t) this.t = t;
  }
  get ms(): number {
    return this.t;
  }
}

type Stack = { service: Service; emulator: RunningEmulator; close(): Promise<void> };

async function startStack(settleMs: number, clock?: Clock): Promise<Stack> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "scim-connector-bench-budget-"));
  await chmod(dir, 0o755);
  const mappingFile = path.join(dir, "mapping.yaml");
  await writeFile(mappingFile, mappingYaml());
  const pg = await startEmbeddedPostgres(path.join(dir, "data"), { persistent: false, throwaway: true });
  const emulator = await startEmulator({
    scimDailyLimit: 1_000_000_000,
    scimJournal: true,
    ...(clock ? { clock } : {}),
  });
  const service = await startService({
    env: loadEnv({
      PORT: "0",
      HOST: "127.0.0.1",
      SCIM_TOKEN: TOKEN,
      MAPPING_FILE: mappingFile,
      // The bench measures calls per change, not the daily cap: the ledger never defers work here
      // unless --budget asks for a busy day (reductions with the ordinary budget spent).
      PLATFORM_SCIM_DAILY_BUDGET: String(values.budget),
      PLATFORM_SCIM_BUDGET_RESERVE_PERCENT: String(values["reserve-percent"]),
      RECONCILE_WORKERS: "4",
      RECONCILE_POLL_MS: "100",
      RECONCILE_SETTLE_MS: String(settleMs),
      RECONCILE_SETTLE_MAX_MS: String(Math.max(settleMs, SETTLE_MAX_MS)),
      RESYNC_CRON: "off",
      DATABASE_POOL_SIZE: "20",
      LOG_LEVEL: "warn",
    }),
    databaseUrl: pg.url,
    platform: { url: emulator.url, scimToken: "dev-scim-token", apiKey: undefined, requestOrigin: "bench" },
    workers: false,
    ...(clock ? { clock } : {}),
  });
  return {
    service,
    emulator,
    async close() {
      await service.close();
      await emulator.close();
      await pg.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function scimClient(service: Service) {
  return async (method: string, p: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const res = await fetch(`${service.url}/scim/v2${p}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/scim+json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${text.slice(0, 300)}`);
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
}

function scimCalls(emulator: RunningEmulator): number {
  let n = 0;
  for (const [key, count] of emulator.state.requestCounts) if (key.includes("/scim/v2/Users")) n += count;
  return n;
}

type PlatformAccount = ReturnType<RunningEmulator["state"]["dashboardUsers"]["byId"]["get"]> & object;

/**
 * The bench's own reading of a platform account, independent of the connector's parser: every
 * workspace, permission and team as the platform holds it, in a stable order but never merged,
 * de-duplicated or dropped (a doubled permission or an empty workspace is a difference). Only
 * the platform's own ids (appGroupId, teamId) are left out.
 */
function readAccount(account: PlatformAccount): DesiredDashboardUser {
  const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return {
    userName: account.userName,
    givenName: account.name.givenName,
    familyName: account.name.familyName,
    department: account.department,
    companyPermissions: [...account.permissions.companyPermissions].sort(byText),
    workspaces: account.permissions.appGroup
      .map((ws) => ({
        appGroupName: ws.appGroupName,
        appGroupPermissions: [...(ws.appGroupPermissions ?? [])].sort(byText),
        appGroupPermissionSets: (ws.appGroupPermissionSets ?? []).map((s) => s.appGroupPermissionSetName).sort(byText),
        team: (ws.team ?? [])
          .map((t) => ({ teamName: t.teamName, teamPermissions: [...(t.teamPermissions ?? [])].sort(byText) }))
          .sort((a, b) => byText(a.teamName, b.teamName)),
      }))
      .sort((a, b) => byText(a.appGroupName, b.appGroupName)),
  };
}

/** The grants a platform account holds, read from the emulator's own shape with the same keys as the oracle's `grantsOf`. */
function platformGrants(permissions: PlatformAccount["permissions"]): Set<string> {
  return new Set([
    ...permissions.companyPermissions.map((p) => `company:${p}`),
    ...permissions.appGroup.flatMap((w) => [
      ...(w.appGroupPermissions ?? []).map((p) => `${w.appGroupName}:${p}`),
      ...(w.team ?? []).flatMap((t) => (t.teamPermissions ?? []).map((p) => `${w.appGroupName}/${t.teamName}:${p}`)),
    ]),
  ]);
}

/** An account kept with no access at all (stripped, its delete pending): what the oracle's "no account" allows. */
const holdsNoAccess = (u: DesiredDashboardUser) => u.companyPermissions.length === 0 && u.workspaces.length === 0;

/**
 * The emulator's accounts against the oracle: every difference is a correctness failure. Where
 * the oracle wants no account, an account with no access at all (stripped, waiting for its
 * delete) matches; `stripped` counts them.
 */
function mismatches(
  emulator: RunningEmulator,
  expected: Map<string, DesiredDashboardUser | null>,
  counts: { stripped: number } = { stripped: 0 },
): number {
  const held = new Map<string, DesiredDashboardUser>();
  for (const account of emulator.state.dashboardUsers.byId.values()) {
    const key = account.userName.toLowerCase();
    if (held.has(key)) console.log(`  two platform accounts for ${account.userName}`);
    held.set(key, readAccount(account));
  }
  let wrong = 0;
  for (const [name, want] of expected) {
    let got = held.get(name.toLowerCase()) ?? null;
    if (want === null && got && holdsNoAccess(got)) {
      counts.stripped++;
      got = null;
    }
    if (!isDeepStrictEqual(got, want)) {
      wrong++;
      if (wrong <= 3)
        console.log(
          `  differs from the oracle: ${name}: platform ${JSON.stringify(got)}, oracle ${JSON.stringify(want)}`,
        );
    }
    held.delete(name.toLowerCase());
  }
  return wrong + held.size;
}

// ---------------------------------------------------------------------------------------------
// The IdP: the planned model (what the admins decide) and what it has sent so far (the oracle's input).

type Dialect = "okta" | "entra";

function createWorld(send: ReturnType<typeof scimClient>, dialect: Dialect) {
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
  const groups: Group[] = Array.from({ length: 60 }, (_, k) => ({ ...groupDefinition(k), id: "" }));
  const users: User[] = [];
  const sent = new Map<string, UserState>();
  const entra = dialect === "entra";

  const newUser = (index: number): User => {
    const groupsOf = new Set<number>();
    if (index % 20 !== 19) groupsOf.add(pick(PRIMARY)); // one in twenty is in no mapped group
    if (random() < 0.2) groupsOf.add(pick(ANALYSTS));
    if (random() < 0.5) groupsOf.add(pick(SOCIAL));
    return {
      index,
      id: "",
      userName: `user${String(index).padStart(5, "0")}@example.com`,
      givenName: `Given${index}`,
      familyName: `Family${index}`,
      active: true,
      groups: groupsOf,
    };
  };
  /** The user as the IdP holds it when the request leaves (what it has sent so far, not what is planned). */
  const userResource = (u: User) => {
    const now = sent.get(u.userName) ?? u;
    return {
      schemas: [USER_SCHEMA],
      userName: u.userName,
      name: { givenName: now.givenName, familyName: now.familyName },
      emails: [{ value: u.userName, type: "work", primary: true }],
      active: now.active,
    };
  };
  const request = (
    key: string,
    touches: User[],
    naive: number,
    effect: () => void,
    fn: () => Promise<unknown>,
    membership = false,
  ): PacedRequest => ({
    key,
    touches: touches.map((u) => u.userName),
    naive,
    effect,
    send: fn,
    membership,
  });
  const createUser = (u: User) =>
    request(
      u.userName,
      [u],
      1,
      () =>
        sent.set(u.userName, { active: u.active, givenName: u.givenName, familyName: u.familyName, groups: new Set() }),
      async () => {
        u.id = (await send("POST", "/Users", userResource(u))).body.id;
      },
    );
  const memberOp = (u: User, k: number, op: "add" | "remove") => {
    if (op === "add") u.groups.add(k);
    else u.groups.delete(k);
    const g = groups[k]!;
    const effect = () => (op === "add" ? sent.get(u.userName)!.groups.add(k) : sent.get(u.userName)!.groups.delete(k));
    const operation = () =>
      entra
        ? { op: op === "add" ? "Add" : "Remove", path: "members", value: [{ value: u.id }] }
        : op === "add"
          ? { op: "add", path: "members", value: [{ value: u.id }] }
          : { op: "remove", path: `members[value eq "${u.id}"]` };
    return {
      ...request(
        u.userName,
        [u],
        1,
        effect,
        () => send("PATCH", `/Groups/${g.id}`, { schemas: [PATCH_SCHEMA], Operations: [operation()] }),
        true,
      ),
      group: k,
    };
  };
  const profileWrite = (u: User, familyName: string) => {
    u.familyName = familyName;
    const effect = () => (sent.get(u.userName)!.familyName = familyName);
    return request(u.userName, [u], 1, effect, () =>
      entra
        ? send("PATCH", `/Users/${u.id}`, {
            schemas: [PATCH_SCHEMA],
            Operations: [{ op: "Replace", path: "name.familyName", value: familyName }],
          })
        : send("PUT", `/Users/${u.id}`, userResource(u)),
    );
  };

  /**
   * The initial provisioning. Paced (as both IdPs do it): users with no groups, then each group
   * empty, then one PATCH per membership. Batched: each group is created with its members.
   */
  function initialLoad(paced: boolean): IdpEvent[] {
    for (let i = 0; i < USERS; i++) users.push(newUser(i));
    const planned = users.map((u) => [...u.groups]);
    users.forEach((u) => (u.groups = new Set()));
    const events: IdpEvent[] = users.map((u) => ({ requests: [createUser(u)] }));
    for (const g of groups) {
      const members = paced ? [] : users.filter((_, i) => planned[i]!.includes(g.index));
      if (!paced) members.forEach((u) => u.groups.add(g.index));
      const effect = () => members.forEach((u) => sent.get(u.userName)!.groups.add(g.index));
      const post = async () => {
        const body = {
          schemas: [GROUP_SCHEMA],
          displayName: g.displayName,
          ...(g.externalId ? { externalId: g.externalId } : {}),
          members: members.map((u) => ({ value: u.id })),
        };
        g.id = (await send("POST", "/Groups", body)).body.id;
      };
      events.push({ requests: [request(`group:${g.index}`, members, members.length, effect, post)] });
    }
    if (paced)
      for (const g of groups)
        users.forEach(
          (u, i) => planned[i]!.includes(g.index) && events.push({ requests: [memberOp(u, g.index, "add")] }),
        );
    return events;
  }

  /** A day of churn: each event is one admin action and the requests the IdP sends for it. */
  function churn(day: number): IdpEvent[] {
    const events: IdpEvent[] = [];
    const active = () => users.filter((u) => u.active);
    // Re-sends of unchanged users (profile pushes, imports): Okta PUTs the whole user, Entra PATCHes a value it already has.
    for (const u of sample(active(), Math.round(USERS * 0.2))) {
      events.push({
        requests: [
          request(
            u.userName,
            [],
            1,
            () => {},
            () =>
              entra
                ? send("PATCH", `/Users/${u.id}`, {
                    schemas: [PATCH_SCHEMA],
                    Operations: [{ op: "Replace", path: "name.familyName", value: sent.get(u.userName)!.familyName }],
                  })
                : send("PUT", `/Users/${u.id}`, userResource(u)),
          ),
        ],
      });
    }
    // Real profile edits: a new family name is part of the dashboard user.
    for (const u of sample(active(), Math.round(USERS * 0.008)))
      events.push({ requests: [profileWrite(u, `${u.familyName}-d${day}`)] });
    // Team moves: out of the primary group, into another (two group PATCHes).
    for (const u of sample(
      active().filter((x) => [...x.groups].some((k) => k < 50)),
      Math.round(USERS * 0.05),
    )) {
      const from = [...u.groups].find((k) => k < 50)!;
      const to = pick(PRIMARY.filter((k) => k !== from));
      events.push({ requests: [memberOp(u, from, "remove"), memberOp(u, to, "add")] });
    }
    // Project assignments: an admin gives a user two more team groups, one click each (two grants seconds apart).
    for (const u of sample(active(), Math.round(USERS * 0.01))) {
      const extra = sample(
        PRIMARY.filter((k) => k < 30 && !u.groups.has(k)),
        2,
      );
      events.push({ requests: extra.map((k) => memberOp(u, k, "add")) });
    }
    // Analyst and social-group comings and goings.
    for (const u of sample(active(), Math.round(USERS * 0.012))) {
      const k = [...u.groups].find((g) => ANALYSTS.includes(g));
      events.push({ requests: [memberOp(u, k ?? pick(ANALYSTS), k === undefined ? "add" : "remove")] });
    }
    for (const u of sample(active(), Math.round(USERS * 0.02))) {
      const k = [...u.groups].find((g) => SOCIAL.includes(g));
      events.push({ requests: [memberOp(u, k ?? pick(SOCIAL), k === undefined ? "add" : "remove")] });
    }
    // Group renames that mean nothing to the mapping (matched by externalId or pattern, or unmapped).
    for (const k of sample([...Array.from({ length: 30 }, (_, i) => i), ...ANALYSTS, ...SOCIAL], 3)) {
      const g = groups[k]!;
      g.displayName = k < 30 ? `Team ${k} (${day})` : k < 55 ? `Analysts-${k}-r${day}` : `Social ${k} r${day}`;
      const members = users.filter((u) => u.groups.has(k));
      const displayName = g.displayName;
      const op = entra
        ? { op: "Replace", path: "displayName", value: displayName }
        : { op: "replace", path: "displayName", value: displayName };
      events.push({
        requests: [
          request(
            `group:${k}`,
            members,
            members.length,
            () => {},
            () => send("PATCH", `/Groups/${g.id}`, { schemas: [PATCH_SCHEMA], Operations: [op] }),
            true,
          ),
        ],
      });
    }
    // Leavers: deactivated (neither IdP deletes on unassignment by default).
    for (const u of sample(active(), Math.round(USERS * 0.005))) {
      u.active = false;
      const op = entra
        ? { op: "Replace", path: "active", value: "False" }
        : { op: "replace", value: { active: false } };
      events.push({
        requests: [
          request(
            u.userName,
            [u],
            1,
            () => (sent.get(u.userName)!.active = false),
            () => send("PATCH", `/Users/${u.id}`, { schemas: [PATCH_SCHEMA], Operations: [op] }),
          ),
        ],
      });
    }
    // Joiners: created, then added to their groups.
    for (let n = 0; n < Math.round(USERS * 0.005); n++) {
      const u = newUser(users.length);
      users.push(u);
      const memberships = [...u.groups];
      u.groups = new Set();
      events.push({ requests: [createUser(u), ...memberships.map((k) => memberOp(u, k, "add"))] });
    }
    return events;
  }

  /** The oracle's verdict for every user the IdP has sent. */
  const expected = () => new Map([...sent.entries()].map(([name, state]) => [name, oracleDesired(name, state)]));
  return { users, sent, initialLoad, churn, expected, random };
}

// ---------------------------------------------------------------------------------------------
// Batched days.

async function batchedDays(): Promise<void> {
  const stack = await startStack(0);
  const send = scimClient(stack.service);
  const world = createWorld(send, "okta");
  const worker = stack.service.reconciliation!.worker;
  let naive = 0;
  let idpWrites = 0;

  /** Runs the day's requests, at most CONCURRENCY at once, in order per user/group key. */
  async function push(requests: IdpRequest[]): Promise<void> {
    const chains = new Map<string, IdpRequest[]>();
    for (const r of requests) chains.set(r.key, [...(chains.get(r.key) ?? []), r]);
    const queue = [...chains.values()];
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let chain = queue.shift(); chain; chain = queue.shift()) {
          for (const r of chain) {
            r.effect();
            await r.send();
            idpWrites++;
            naive += r.naive;
          }
        }
      }),
    );
  }

  async function converge(): Promise<number> {
    const started = Date.now();
    if (!values.live) await worker.start();
    for (;;) {
      const rows: { n: number; parked: number }[] = await stack.service.db.query(
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

  const minimumBetween = (
    before: Map<string, DesiredDashboardUser | null>,
    after: Map<string, DesiredDashboardUser | null>,
  ) => {
    let creates = 0;
    let updates = 0;
    let deletes = 0;
    for (const [name, now] of after) {
      const was = before.get(name) ?? null;
      if (!was && now) creates++;
      else if (was && !now) deletes++;
      else if (was && now && !sameDesired(was, now)) updates++;
    }
    return { creates, updates, deletes, total: creates + updates + deletes };
  };

  type Row = {
    day: string;
    writes: number;
    naive: number;
    minimum: number;
    spent: number;
    detail: string;
    seconds: number;
    wrong: number;
  };
  const rows: Row[] = [];
  let previous = new Map<string, DesiredDashboardUser | null>();
  if (values.live) await worker.start();
  for (let day = 0; day <= DAYS; day++) {
    const [writes0, naive0, calls0] = [idpWrites, naive, scimCalls(stack.emulator)];
    const pushStarted = Date.now();
    if (day === 0) {
      // Batched, the initial load sends the users, then each group with its members in one POST.
      const requests = world.initialLoad(false).flatMap((e) => e.requests);
      await push(requests.filter((r) => !r.key.startsWith("group:")));
      await push(requests.filter((r) => r.key.startsWith("group:")));
    } else await push(world.churn(day).flatMap((e) => e.requests));
    const pushMs = Date.now() - pushStarted;
    const convergeMs = await converge();
    const now = world.expected();
    const min = minimumBetween(previous, now);
    previous = now;
    rows.push({
      day: day === 0 ? "0 (load)" : String(day),
      writes: idpWrites - writes0,
      naive: naive - naive0,
      minimum: min.total,
      spent: scimCalls(stack.emulator) - calls0,
      detail: `${min.creates}c ${min.updates}u ${min.deletes}d`,
      seconds: Math.round((pushMs + convergeMs) / 100) / 10,
      wrong: mismatches(stack.emulator, now),
    });
    const r = rows[rows.length - 1]!;
    console.log(
      `day ${r.day}: ${r.writes} IdP writes, minimum ${r.minimum} (${r.detail}), spent ${r.spent}, naive ${r.naive}; ${r.wrong} accounts differ from the oracle; ${r.seconds}s`,
    );
  }
  if (values.live) await worker.stop();
  await stack.close();

  const week = rows.slice(1);
  const sum = (xs: Row[], f: (r: Row) => number) => xs.reduce((n, r) => n + f(r), 0);
  console.log(
    `\nBudget efficiency, batched days: ${USERS} users, 60 groups, ${DAYS} days of churn${values.live ? " (reconciler live during pushes)" : " (reconciler converges after each day)"}\n`,
  );
  console.log("day        IdP writes  minimum (c/u/d)        spent  spent÷min   naive  naive÷min  wrong");
  for (const r of rows) {
    console.log(
      `${r.day.padEnd(10)} ${String(r.writes).padStart(10)}  ${String(r.minimum).padStart(7)} ${`(${r.detail})`.padEnd(16)} ${String(r.spent).padStart(6)}  ${ratio(r.spent, r.minimum).padStart(9)}  ${String(r.naive).padStart(6)}  ${ratio(r.naive, r.minimum).padStart(9)}  ${String(r.wrong).padStart(5)}`,
    );
  }
  const [wMin, wSpent, wNaive, wWrites] = [
    sum(week, (r) => r.minimum),
    sum(week, (r) => r.spent),
    sum(week, (r) => r.naive),
    sum(week, (r) => r.writes),
  ];
  console.log(`\nThe week (days 1-${DAYS}): ${wWrites} IdP writes; the oracle's minimum: ${wMin} platform calls`);
  console.log(`  connector: ${wSpent} calls spent, ${ratio(wSpent, wMin)} × the minimum (target 1.00)`);
  console.log(`  naive forwarder: ${wNaive} calls, ${ratio(wNaive, wMin)} × the minimum`);
  const allMin = sum(rows, (r) => r.minimum);
  console.log(
    `With the initial load: connector ${ratio(
      sum(rows, (r) => r.spent),
      allMin,
    )} ×, naive ${ratio(
      sum(rows, (r) => r.naive),
      allMin,
    )} × the minimum of ${allMin}`,
  );
  console.log(
    `Headline (mode: batched days${values.live ? ", live reconciler" : ""}): ${ratio(wSpent, wMin)} × the minimum`,
  );
  const wrong = sum(rows, (r) => r.wrong);
  console.log(
    wrong === 0
      ? "Every account on the platform matched the oracle after every day."
      : `${wrong} account differences from the oracle: FAILED`,
  );
  process.exitCode = wrong === 0 ? 0 : 1;
}

// ---------------------------------------------------------------------------------------------
// A paced IdP on a simulated clock.

/** `reduces`: some change in it took access away (applied at once, so a move costs up to two calls). */
type Burst = {
  start: number;
  end: number;
  before: DesiredDashboardUser | null;
  after: DesiredDashboardUser | null;
  reduces: boolean;
  calls: Call[];
  /** Each IdP change in the burst, and whether it took access away. */
  steps: Step[];
};
/** One IdP change to a user: when, what the oracle wanted before and after it, and where the platform's journal stood when it was sent. */
type Step = {
  at: number;
  before: DesiredDashboardUser | null;
  desired: DesiredDashboardUser | null;
  reduces: boolean;
  journalAt: number;
};
/** A platform call for one account, from the emulator's journal: `index` in the journal, `held` the grants the account had once it was answered. */
type Call = { at: number; method: string; index: number; held: Set<string> };
type PacedResult = {
  label: string;
  phases: PhaseFigures[];
  wrong: number;
  /** Accounts the oracle wants gone that the platform held with no access (stripped, delete pending), summed over the days. */
  stripped: number;
  /** SCIM user requests the emulator received in the run. */
  received: number;
  /**
   * Calls the bench cannot attribute to a change of the IdP's: requests missing from the journal,
   * requests for no known account, and requests for accounts the IdP never changed.
   */
  unattributed: { missing: number; noAccount: number; strangers: number };
  seconds: number;
  requests: number;
};
type PhaseFigures = {
  phase: string;
  grants: { minimum: number; spent: number };
  reductions: { minimum: number; spent: number };
  noChange: number;
  latencies: number[];
  /**
   * Per change that took away access the platform held at that moment (by the emulator's journal):
   * from the IdP's request to the platform call after which the platform no longer held any of it
   * (Infinity: none by the end of the run).
   */
  revocations: number[];
  /** Changes that took access away which the platform did not hold (a grant still waiting, an account already stripped): nothing to revoke. */
  revocationsNotHeld: number;
  /** Access taken away that the IdP gave back before the platform removed it (never timed). */
  revocationsUndone: number;
  /** PUTs that left an account with no access (in `reductions`), and DELETEs after the grace (not in any bucket). */
  strips: number;
  deferredDeletes: number;
  /** Accounts deleted and later created again for the same user (target 0). */
  recreated: number;
  /** Calls for a user before the IdP first changed it (counted, not dropped). */
  beforeFirstBurst: number;
};

const T0 = Date.UTC(2026, 2, 2); // a Monday, 00:00 UTC

/** When each request leaves the IdP: the events' requests in IdP order, one every 1/rate s at most. */
function schedule(
  dialect: Dialect,
  day: number,
  events: IdpEvent[],
  random: () => number,
): { at: number; request: IdpRequest }[] {
  const gap = 1000 / RATE;
  const dayStart = T0 + day * DAY;
  const out: { at: number; request: IdpRequest }[] = [];
  let last = -Infinity;
  const emit = (wanted: number, request: IdpRequest) => {
    last = Math.ceil(Math.max(wanted, last + gap));
    out.push({ at: last, request });
  };
  if (day === 0) {
    // The first provisioning cycle, from 01:00: users, then groups, then memberships, in order.
    for (const e of events) for (const r of e.requests) emit(dayStart + HOUR, r);
    return out;
  }
  // Admin actions during the working day; the requests of one action 2 s apart (one click each).
  const timed = events
    .map((e) => ({ at: dayStart + 8 * HOUR + Math.floor(random() * 12 * HOUR), e }))
    .sort((a, b) => a.at - b.at);
  if (dialect === "okta") {
    const wanted = timed
      .flatMap(({ at, e }) => e.requests.map((r, i) => ({ at: at + i * 2_000, r })))
      .sort((a, b) => a.at - b.at);
    for (const { at, r } of wanted) emit(at, r);
    return out;
  }
  // Entra: a cycle every 40 minutes sends what changed since the last one: user writes first, then memberships group by group.
  const cycle = 40 * 60_000;
  const cycles = new Map<number, IdpEvent[]>();
  for (const { at, e } of timed) {
    const next = dayStart + Math.ceil((at - dayStart + 1) / cycle) * cycle;
    cycles.set(next, [...(cycles.get(next) ?? []), e]);
  }
  for (const [start, batch] of [...cycles.entries()].sort((a, b) => a[0] - b[0])) {
    const requests = batch.flatMap((e) => e.requests);
    for (const r of requests.filter((x) => !x.membership)) emit(start, r);
    const byGroup = new Map<string, IdpRequest[]>();
    for (const r of requests.filter((x) => x.membership)) {
      const groupKey = r.group === undefined ? r.key : `group:${r.group}`;
      byGroup.set(groupKey, [...(byGroup.get(groupKey) ?? []), r]);
    }
    for (const rs of byGroup.values()) for (const r of rs) emit(start, r);
  }
  return out;
}

async function pacedRun(dialect: Dialect, settleMs: number, burstWindowMs: number): Promise<PacedResult> {
  const started = Date.now();
  const clock = new SimClock(T0);
  const stack = await startStack(settleMs, clock);
  const send = scimClient(stack.service);
  const world = createWorld(send, dialect);
  const worker = stack.service.reconciliation!.worker;
  const db = stack.service.db;

  const drain = async () => {
    while (await worker.runOnce());
  };
  /** The next moment a queued row becomes due (a grant settling, a retry), or null. */
  const nextDue = async (): Promise<number | null> => {
    const rows: { at: Date | null }[] = await db.query(
      `SELECT min(not_before) AS at FROM reconcile_queue WHERE parked_at IS NULL AND priority IS NOT NULL AND not_before > $1`,
      [clock.now()],
    );
    return rows[0]?.at ? rows[0].at.getTime() : null;
  };
  const advanceTo = async (t: number | null) => {
    for (;;) {
      const due = await nextDue();
      if (due === null || (t !== null && due > t)) break;
      clock.set(due);
      await drain();
    }
    if (t !== null) clock.set(t);
  };

  // Per user: when the IdP changed it and what the oracle wants after each change.
  const touches = new Map<string, { at: number; desired: DesiredDashboardUser | null; journalAt: number }[]>();
  const journal = stack.emulator.state.scimJournal!;
  const phases: { phase: string; from: number; to: number }[] = [];
  let wrong = 0;
  const strippedCount = { stripped: 0 };
  let requests = 0;
  const dialectName = dialect === "okta" ? "Okta" : "Entra";

  for (let day = 0; day <= DAYS; day++) {
    const events = day === 0 ? world.initialLoad(true) : world.churn(day);
    const timeline = schedule(dialect, day, events, world.random);
    for (const { at, request } of timeline) {
      await advanceTo(at);
      request.effect();
      await request.send();
      requests++;
      for (const name of request.touches) {
        const list = touches.get(name) ?? touches.set(name, []).get(name)!;
        // journalAt: the platform calls made before this change (the connector calls nothing while the IdP writes).
        list.push({ at, desired: oracleDesired(name, world.sent.get(name)!), journalAt: journal.length });
      }
      await drain();
    }
    // Converge the day, but leave the deletes pending after a grace for the days they fall in.
    await advanceTo(T0 + (day + 1) * DAY - 1);
    wrong += mismatches(stack.emulator, world.expected(), strippedCount);
    if (day === 0) phases.push({ phase: "onboarding", from: T0, to: T0 + DAY });
    process.stdout.write(
      `  ${dialectName}, window ${settleMs ? `${settleMs / 1000} s` : "off"}: day ${day} done (${requests} requests so far, ${Math.round((Date.now() - started) / 1000)} s)\n`,
    );
  }
  phases.push({ phase: `week (days 1-${DAYS})`, from: T0 + DAY, to: T0 + (DAYS + 1) * DAY });

  // Platform calls per account as the platform received them: the emulator's own journal, at its
  // (simulated) clock, every request counted, none taken from the connector's ledger.
  const received = scimCalls(stack.emulator);
  if (journal.length !== received)
    console.warn(`  the journal holds ${journal.length} of the ${received} SCIM requests the emulator counted`);
  const callsOf = new Map<string, Call[]>();
  let unattributed = 0;
  for (const [index, call] of journal.entries()) {
    if (!call.userName) {
      unattributed++;
      continue;
    }
    const key = call.userName.toLowerCase();
    const held = call.permissionsAfter ? platformGrants(call.permissionsAfter) : new Set<string>();
    (callsOf.get(key) ?? callsOf.set(key, []).get(key)!).push({ at: call.at, method: call.method, index, held });
  }
  await stack.close();

  const figures: PhaseFigures[] = phases.map(({ phase }) => ({
    phase,
    grants: { minimum: 0, spent: 0 },
    reductions: { minimum: 0, spent: 0 },
    noChange: 0,
    latencies: [],
    revocations: [],
    revocationsNotHeld: 0,
    revocationsUndone: 0,
    strips: 0,
    deferredDeletes: 0,
    recreated: 0,
    beforeFirstBurst: 0,
  }));
  const phaseOf = (at: number) =>
    figures[
      Math.max(
        0,
        phases.findIndex((p) => at >= p.from && at < p.to),
      )
    ]!;
  for (const [name, list] of touches) {
    const bursts: Burst[] = [];
    let before: DesiredDashboardUser | null = null;
    for (const t of list) {
      const open = bursts[bursts.length - 1];
      const reduces = takesAccessAway(before, t.desired);
      const step: Step = { at: t.at, before, desired: t.desired, reduces, journalAt: t.journalAt };
      if (open && t.at - open.end <= burstWindowMs) {
        open.end = t.at;
        open.after = t.desired;
        open.reduces ||= reduces;
        open.steps.push(step);
      } else bursts.push({ start: t.at, end: t.at, before, after: t.desired, reduces, calls: [], steps: [step] });
      before = t.desired;
    }
    const calls = callsOf.get(name.toLowerCase()) ?? [];
    const steps = bursts.flatMap((b) => b.steps);
    callsOf.delete(name.toLowerCase());
    for (const [i, call] of calls.entries()) {
      // Destroyed and re-created: a DELETE of this user's account followed by a POST of a new one.
      if (call.method === "POST" && calls.slice(0, i).some((c) => c.method === "DELETE")) phaseOf(call.at).recreated++;
      const b = bursts.findLast((x) => x.start <= call.at);
      if (!b) {
        phaseOf(call.at).beforeFirstBurst++; // counted, never dropped
        continue;
      }
      // A DELETE long after its burst is the delete after the grace: counted apart.
      if (call.method === "DELETE" && call.at - b.end > HOUR) {
        phaseOf(call.at).deferredDeletes++;
        continue;
      }
      b.calls.push(call);
    }
    for (const b of bursts) {
      const f = phaseOf(b.start);
      if (sameDesired(b.before, b.after)) {
        f.noChange += b.calls.length;
        continue;
      }
      // Reductions are immediate: one call per step that takes access away, plus one if grants follow the last.
      const reductionSteps = b.steps.filter((s) => s.reduces);
      const afterLastReduction = reductionSteps.at(-1)?.desired;
      const minimum = reductionSteps.length
        ? reductionSteps.length + (sameDesired(afterLastReduction ?? null, b.after) ? 0 : 1)
        : 1;
      const bucket = reductionSteps.length ? f.reductions : f.grants;
      bucket.minimum += minimum;
      bucket.spent += b.calls.length;
      if (b.after === null) f.strips += b.calls.filter((c) => c.method === "PUT").length;
      if (bucket === f.grants && b.calls.length) f.latencies.push(Math.max(...b.calls.map((c) => c.at)) - b.end);
    }
    for (const [i, s] of steps.entries()) {
      if (!s.reduces) continue;
      const f = phaseOf(s.at);
      // What this change took away that the platform held when the IdP sent it.
      const heldThen = calls.findLast((c) => c.index < s.journalAt)?.held ?? new Set<string>();
      const kept = grantsOf(s.desired);
      const revoked = [...grantsOf(s.before)].filter((g) => !kept.has(g) && heldThen.has(g));
      if (!revoked.length) {
        f.revocationsNotHeld++;
        continue;
      }
      const removed = calls.find((c) => c.index >= s.journalAt && revoked.every((g) => !c.held.has(g)));
      const regranted = steps.slice(i + 1).find((t) => revoked.some((g) => grantsOf(t.desired).has(g)));
      if (regranted && (!removed || regranted.journalAt <= removed.index)) f.revocationsUndone++;
      else {
        f.revocations.push(removed ? removed.at - s.at : Infinity);
        if (!removed)
          console.warn(`  never revoked on the platform: ${revoked.join(", ")} of ${name}, taken away at ${iso(s.at)}`);
      }
    }
  }
  const strangers = [...callsOf.values()].reduce((n, c) => n + c.length, 0);
  if (strangers || unattributed)
    console.warn(`  ${strangers} calls for accounts the IdP never changed, ${unattributed} for no known account`);
  const missing = Math.max(0, received - journal.length);
  return {
    label: `${dialectName}, window ${settleMs ? `${settleMs / 1000} s (cap ${SETTLE_MAX_MS / 1000} s)` : "off"}`,
    phases: figures,
    wrong,
    stripped: strippedCount.stripped,
    received,
    unattributed: { missing, noAccount: unattributed, strangers },
    seconds: Math.round((Date.now() - started) / 1000),
    requests,
  };
}

const iso = (ms: number) => new Date(ms).toISOString();
const ratio = (a: number, b: number) => (b === 0 ? (a === 0 ? "1.00" : "∞") : (a / b).toFixed(2));
const percentile = (xs: number[], p: number) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};
const seconds = (ms: number) => (Number.isNaN(ms) ? "—" : `${(ms / 1000).toFixed(1)} s`);

async function pacedIdp(dialect: Dialect): Promise<void> {
  const runs: PacedResult[] = [];
  const window = values.window;
  if (window === "both" || window === "on") runs.push(await pacedRun(dialect, SETTLE_MS, SETTLE_MS));
  if (window === "both" || window === "off") runs.push(await pacedRun(dialect, 0, SETTLE_MS));
  console.log(
    `\nBudget efficiency, paced IdP: ${dialect === "okta" ? "Okta push groups" : "Entra ID provisioning cycles"} at ${RATE} requests/s, sequential; ${USERS} users, 60 groups, ${DAYS} days of churn.`,
  );
  console.log(
    `Minimum: per burst of a user's changes (bursts end after ${SETTLE_MS / 1000} s of quiet) whose desired dashboard user differs between its start and its end, from the bench's own oracle: one call per change that takes access away (reductions are immediate), plus one if grants follow it; one call for a burst that only adds access.`,
  );
  console.log(
    "Calls are counted on the emulator (its journal of SCIM requests, at its clock), per account. Strips (a PUT leaving no access) are in the reductions and shown apart; deletes after the grace are counted apart, outside the minimum.",
  );
  console.log(
    "Revocation latency: from an IdP change that takes away access the platform held at that moment (by the journal) to the platform call after which it held none of it; 'not held': changes that took away only what the platform never held (nothing to revoke); 'undone': the IdP gave it back before the platform removed it.\n",
  );
  console.log(
    "run                                  phase              grants: min  spent  ÷min   reductions: min  spent  ÷min   strips  deferred deletes  destroyed+re-created  no-op  before 1st  grant latency p50 / p99  revocation p50 / p99 (n)  not held  undone",
  );
  for (const run of runs) {
    for (const f of run.phases) {
      console.log(
        `${run.label.padEnd(36)} ${f.phase.padEnd(18)} ${String(f.grants.minimum).padStart(12)} ${String(f.grants.spent).padStart(6)} ${ratio(f.grants.spent, f.grants.minimum).padStart(5)}   ${String(f.reductions.minimum).padStart(15)} ${String(f.reductions.spent).padStart(6)} ${ratio(f.reductions.spent, f.reductions.minimum).padStart(5)}   ${String(f.strips).padStart(6)}  ${String(f.deferredDeletes).padStart(16)}  ${String(f.recreated).padStart(20)}  ${String(f.noChange).padStart(5)}  ${String(f.beforeFirstBurst).padStart(10)}  ${`${seconds(percentile(f.latencies, 50))} / ${seconds(percentile(f.latencies, 99))}`.padStart(23)}  ${`${seconds(percentile(f.revocations, 50))} / ${seconds(percentile(f.revocations, 99))} (${f.revocations.length})`.padStart(24)}  ${String(f.revocationsNotHeld).padStart(8)}  ${String(f.revocationsUndone).padStart(6)}`,
      );
    }
  }
  for (const run of runs) {
    const sum = (pick: (f: PhaseFigures) => number) => run.phases.reduce((n, f) => n + pick(f), 0);
    const counted = sum(
      (f) => f.grants.spent + f.reductions.spent + f.noChange + f.deferredDeletes + f.beforeFirstBurst,
    );
    const minimum = sum((f) => f.grants.minimum + f.reductions.minimum);
    const burstCalls = sum((f) => f.grants.spent + f.reductions.spent + f.noChange);
    console.log(
      `${run.label}: calls in bursts ${burstCalls} ÷ minimum ${minimum} = ${ratio(burstCalls, minimum)}; deletes after the grace ${sum((f) => f.deferredDeletes)}; destroyed and re-created ${sum((f) => f.recreated)}; the emulator received ${run.received} SCIM requests (${counted} counted per account); stripped accounts seen at day ends ${run.stripped}; wrong ${run.wrong}; ${run.requests} IdP requests; ${run.seconds} s`,
    );
  }
  const failures = pacedFailures(runs);
  console.log(
    failures.length === 0
      ? "Every account on the platform matched the oracle after every day; no account was destroyed and re-created, every revocation reached the platform, and every call was attributed to an IdP change."
      : failures.map((f) => `FAILED: ${f}`).join("\n"),
  );
  process.exitCode = failures.length === 0 ? 0 : 1;
}

/** What makes a paced run fail, in words: each of these sets the exit code. */
function pacedFailures(runs: PacedResult[]): string[] {
  const failures: string[] = [];
  for (const run of runs) {
    const sum = (pick: (f: PhaseFigures) => number) => run.phases.reduce((n, f) => n + pick(f), 0);
    const recreated = sum((f) => f.recreated);
    const neverRevoked = sum((f) => f.revocations.filter((ms) => ms === Infinity).length);
    const { missing, noAccount, strangers } = run.unattributed;
    if (run.wrong) failures.push(`${run.label}: ${run.wrong} account differences from the oracle`);
    if (recreated) failures.push(`${run.label}: ${recreated} accounts destroyed and re-created`);
    if (neverRevoked) failures.push(`${run.label}: ${neverRevoked} revocations never applied on the platform`);
    if (missing || noAccount || strangers)
      failures.push(
        `${run.label}: calls the bench cannot attribute: ${missing} missing from the emulator's journal, ${noAccount} for no known account, ${strangers} for accounts the IdP never changed`,
      );
  }
  return failures;
}

if (PACED) await pacedIdp(PACED);
else await batchedDays();
