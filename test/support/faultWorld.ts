import { setTimeout as delay } from "node:timers/promises";
import type { DashboardUser } from "../../src/emulator/dashboard/users.js";
import { emulatorCounts, emulatorDump, ledgerDebits, type EmulatorCounts, type Sql } from "./emulator.js";
import { waitForQueueIdle } from "./queue.js";

/**
 * The end state of the world for the fault tests (test/faults/): what the platform (the emulator)
 * must hold for an IdP model under TEST_MAPPING, the budget figures, the mirror's email states,
 * an ETL that keeps writing mirror rows, and an IdP client that re-sends what a dead connector
 * never answered.
 */

export type AccountShape = {
  department: string;
  companyPermissions: string[];
  workspaces: { name: string; permissions: string[]; teams: string[] }[];
};

/** The IdP side of one user, as the tests model it. */
export type ModelUser = { active: boolean; groups: Set<string> };

/** What TEST_MAPPING (test/support/stack.ts) makes of a user: null when it must have no account. */
function expectedAccount(user: ModelUser): AccountShape | null {
  const marketing = user.groups.has("Marketing");
  const admin = user.groups.has("Platform Admins");
  const analyst = [...user.groups].some((g) => g.startsWith("Analysts-"));
  if (!user.active || !(marketing || admin || analyst)) return null;
  const permissions = [
    ...(marketing ? ["basic_access", "send_campaigns_canvases"] : []),
    ...(analyst ? ["export_user_data"] : []),
  ].sort();
  return {
    department: marketing ? "marketing" : "engineering",
    companyPermissions: admin ? ["admin"] : [],
    workspaces: permissions.length
      ? [{ name: "EU Production", permissions, teams: marketing ? ["Lifecycle:basic_access"] : [] }]
      : [],
  };
}

export function accountShape(u: DashboardUser): AccountShape {
  return {
    department: u.department,
    companyPermissions: [...u.permissions.companyPermissions].sort(),
    workspaces: u.permissions.appGroup.map((w) => ({
      name: w.appGroupName,
      permissions: [...w.appGroupPermissions].sort(),
      teams: w.team.map((t) => `${t.teamName}:${[...t.teamPermissions].sort().join(",")}`),
    })),
  };
}

/** Requests of one kind the emulator received (faulted ones included): SCIM user routes, or one REST path. */
export function requestsMatching(counts: EmulatorCounts, match: (key: string) => boolean): number {
  return Object.entries(counts.requests).reduce((n, [key, v]) => (match(key) ? n + v : n), 0);
}
export const isScim = (key: string) => key.includes(" /scim/v2/Users");

/** Arrival times grouped into bursts: a request less than `withinMs` after the previous one joins its burst. */
export function burstsOf(times: readonly number[], withinMs: number): { first: number; last: number }[] {
  const bursts: { first: number; last: number }[] = [];
  for (const at of [...times].sort((a, b) => a - b)) {
    const current = bursts[bursts.length - 1];
    if (current && at - current.last < withinMs) current.last = at;
    else bursts.push({ first: at, last: at });
  }
  return bursts;
}
export const isEmailStatus = (key: string) => key === "POST /email/status";

/**
 * Everything that must hold once the connector has settled, as a list of problems (empty when
 * the world is right): one account per userName, exactly the expected ones with exactly the
 * expected permissions; no platform SCIM call without a debit and no debit beyond the budget;
 * nothing parked; every mirror email state on the platform with its latest value.
 */
export async function worldProblems(options: {
  emulatorUrl: string;
  db: Sql;
  budget: number;
  expected: Map<string, AccountShape | null>;
}): Promise<string[]> {
  const problems: string[] = [];
  const state = await emulatorDump(options.emulatorUrl);
  const byName = new Map<string, DashboardUser[]>();
  for (const u of state.dashboardUsers)
    byName.set(u.userName.toLowerCase(), [...(byName.get(u.userName.toLowerCase()) ?? []), u]);
  for (const [name, accounts] of byName) {
    if (accounts.length !== 1) problems.push(`${name}: ${accounts.length} accounts`);
    if (!options.expected.has(name)) problems.push(`${name}: an account nobody asked for`);
  }
  for (const [name, want] of options.expected) {
    const got = byName.get(name)?.[0];
    if (!want && got) problems.push(`${name}: should have no account`);
    if (want && !got) problems.push(`${name}: missing account`);
    if (want && got && JSON.stringify(accountShape(got)) !== JSON.stringify(want)) {
      problems.push(`${name}: holds ${JSON.stringify(accountShape(got))}, want ${JSON.stringify(want)}`);
    }
  }
  const counts = await emulatorCounts(options.emulatorUrl);
  const debits = await ledgerDebits(options.db);
  if (counts.scimDaily.used > debits)
    problems.push(`platform counted ${counts.scimDaily.used} SCIM calls, ledger only ${debits}`);
  if (debits > options.budget) problems.push(`ledger ${debits} over the budget ${options.budget}`);
  const parked = (
    await options.db.query(`SELECT count(*)::int AS n FROM reconcile_queue WHERE parked_at IS NOT NULL`)
  )[0].n as number;
  if (parked) problems.push(`${parked} reconcile rows parked`);
  const rows: { email: string; subscription_state: string }[] = await options.db.query(
    `SELECT email, subscription_state FROM mirror.email_subscription_states`,
  );
  const stale = rows.filter((r) => state.emailStates[r.email.toLowerCase()] !== r.subscription_state);
  if (stale.length)
    problems.push(
      `${stale.length} of ${rows.length} email states not on the platform with their latest value, e.g. ${JSON.stringify(stale.slice(0, 3))}`,
    );
  const mirrorParked = (
    await options.db.query(`SELECT count(*)::int AS n FROM mirror_sync.pending WHERE parked_at IS NOT NULL`)
  )[0].n as number;
  if (mirrorParked) problems.push(`${mirrorParked} mirror changes parked`);
  return problems;
}

/** Waits (bounded) until the reconcile queue and the mirror's pending changes are both empty. */
export const waitForQuiet = (db: Sql, timeoutMs = 60_000) =>
  waitForQueueIdle(db, { deferred: "wait", mirror: true, timeoutMs });

/** Stands in for the customer's ETL: upserts email states in one statement per tick while it runs. */
export class EtlWriter {
  writes = 0;
  failures = 0;
  private running = false;
  private loop?: Promise<void>;

  constructor(
    private readonly db: Sql,
    private readonly emails: readonly string[],
    private readonly perTick = 20,
  ) {}

  /** One upsert of `perTick` random addresses (or the given ones), each to a random state. */
  async writeOnce(emails: readonly string[] = pick(this.emails, this.perTick)): Promise<void> {
    const states = emails.map(
      () => (["subscribed", "unsubscribed", "opted_in"] as const)[Math.floor(Math.random() * 3)]!,
    );
    await this.db.query(
      `INSERT INTO mirror.email_subscription_states (email, subscription_state)
       SELECT * FROM unnest($1::text[], $2::text[])
       ON CONFLICT (email) DO UPDATE SET subscription_state = EXCLUDED.subscription_state, updated_at = now()`,
      [emails, states],
    );
    this.writes += emails.length;
  }

  start(intervalMs: number): void {
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        // The database may be restarting: a failed upsert committed nothing, so nothing is expected of it.
        await this.writeOnce().catch(() => this.failures++);
        await delay(intervalMs);
      }
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }
}

function pick<T>(items: readonly T[], n: number): T[] {
  const chosen = new Set<T>();
  while (chosen.size < Math.min(n, items.length)) chosen.add(items[Math.floor(Math.random() * items.length)]!);
  return [...chosen];
}

export const SCIM_USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";
const SCIM_GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";
const PATCH_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

/**
 * The IdP pushing to a connector that may be killed under it: a request that gets no answer
 * (connection refused or reset) is sent again, as Okta and Entra do, until `deadline`. A create
 * that was committed before the answer was lost comes back 409; it is then found by filter,
 * as an IdP would. Counts the requests that had to be re-sent.
 */
export class ResilientIdp {
  resent = 0;
  requests = 0;
  /** Every answer by status, retried ones included; 0 = no answer (refused, reset, timed out). */
  readonly answers = new Map<number, number>();

  constructor(
    private readonly baseUrl: () => string,
    private readonly token: string,
  ) {}

  private answered(status: number): void {
    this.answers.set(status, (this.answers.get(status) ?? 0) + 1);
  }

  async send(
    method: string,
    path: string,
    body?: unknown,
    deadlineMs = 120_000,
  ): Promise<{ status: number; body: any }> {
    const deadline = Date.now() + deadlineMs;
    for (let attempt = 0; ; attempt++) {
      this.requests++;
      try {
        const res = await fetch(`${this.baseUrl()}/scim/v2${path}`, {
          method,
          headers: {
            authorization: `Bearer ${this.token}`,
            ...(body === undefined ? {} : { "content-type": "application/scim+json" }),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(10_000),
        });
        const text = await res.text();
        this.answered(res.status);
        // 503 from a connector whose database is away: try again, as an IdP does.
        if (res.status < 500) return { status: res.status, body: text ? JSON.parse(text) : undefined };
      } catch {
        /* no answer: the connector is down or was killed mid-request */
        this.answered(0);
      }
      if (Date.now() > deadline) throw new Error(`IdP gave up on ${method} ${path}`);
      this.resent++;
      await delay(Math.min(1_000, 100 * 2 ** attempt));
    }
  }

  async createUser(userName: string): Promise<string> {
    const res = await this.send("POST", "/Users", {
      schemas: [SCIM_USER_SCHEMA],
      userName,
      name: { givenName: userName.split("@")[0], familyName: "Fault" },
      active: true,
    });
    if (res.status === 201) return res.body.id as string;
    if (res.status !== 409) throw new Error(`create ${userName}: ${res.status} ${JSON.stringify(res.body)}`);
    const found = await this.send("GET", `/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}`);
    const id = found.body?.Resources?.[0]?.id as string | undefined;
    if (!id) throw new Error(`create ${userName} answered 409 but the filter found nothing`);
    return id;
  }

  async createGroup(displayName: string, memberIds: string[]): Promise<string> {
    const res = await this.send("POST", "/Groups", {
      schemas: [SCIM_GROUP_SCHEMA],
      displayName,
      members: memberIds.map((value) => ({ value })),
    });
    if (res.status === 201) return res.body.id as string;
    if (res.status !== 409) throw new Error(`create group ${displayName}: ${res.status} ${JSON.stringify(res.body)}`);
    const found = await this.send("GET", `/Groups?filter=${encodeURIComponent(`displayName eq "${displayName}"`)}`);
    return found.body.Resources[0].id as string;
  }

  async patch(path: string, operations: unknown[]): Promise<void> {
    const res = await this.send("PATCH", path, { schemas: [PATCH_SCHEMA], Operations: operations });
    if (res.status >= 300) throw new Error(`patch ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  }

  addMembers = (groupId: string, ids: string[]) =>
    this.patch(`/Groups/${groupId}`, [{ op: "add", path: "members", value: ids.map((value) => ({ value })) }]);
  removeMember = (groupId: string, id: string) =>
    this.patch(`/Groups/${groupId}`, [{ op: "remove", path: `members[value eq "${id}"]` }]);
  setActive = (id: string, active: boolean) => this.patch(`/Users/${id}`, [{ op: "replace", value: { active } }]);
}

/** The IdP users of a test, with their model. */
export class IdpModel {
  readonly users = new Map<string, ModelUser & { id: string }>();
  readonly groupIds = new Map<string, string>();

  expected(): Map<string, AccountShape | null> {
    return new Map([...this.users].map(([name, u]) => [name, expectedAccount(u)]));
  }
}
