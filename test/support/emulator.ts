import type { EmulatorState } from "../../src/emulator/state.js";

/**
 * The one client for the emulator's control plane (`/_emulator/…`) and the budget ledger the
 * tests compare it with. No vitest import here, so the benches can use it too.
 */

/** Anything that runs SQL and returns rows: the `Database` facade or a `Queryable` (src/db/database.ts). */
export type Sql = { query(sql: string, params?: unknown[]): Promise<any[]> };

/** What `GET /_emulator/state` holds that the tests read: the platform's dashboard users and email states. */
export type EmulatorDump = Pick<ReturnType<EmulatorState["dump"]>, "dashboardUsers" | "emailStates">;
export type EmulatorCounts = ReturnType<EmulatorState["stats"]>;

async function control(emulatorUrl: string, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${emulatorUrl}/_emulator${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
  });
}

async function controlJson<T>(emulatorUrl: string, path: string): Promise<T> {
  const res = await control(emulatorUrl, "GET", path);
  if (!res.ok) throw new Error(`emulator ${path}: ${res.status}`);
  return (await res.json()) as T;
}

export async function addFault(emulatorUrl: string, fault: Record<string, unknown>): Promise<void> {
  const res = await control(emulatorUrl, "POST", "/faults", fault);
  if (res.status !== 201) throw new Error(`fault ${res.status}: ${await res.text()}`);
}

/** Loads the company's own objects the platform has no API to create (workspaces, permission sets) into the emulator. */
export async function loadFixtures(emulatorUrl: string, fixtures: Record<string, unknown>): Promise<void> {
  const res = await control(emulatorUrl, "POST", "/fixtures", fixtures);
  if (res.status >= 300) throw new Error(`fixtures ${res.status}: ${await res.text()}`);
}

export async function clearFaults(emulatorUrl: string): Promise<void> {
  await control(emulatorUrl, "DELETE", "/faults");
}

export const emulatorDump = (emulatorUrl: string) => controlJson<EmulatorDump>(emulatorUrl, "/state");

export const emulatorCounts = (emulatorUrl: string) => controlJson<EmulatorCounts>(emulatorUrl, "/stats");

/** Arrival times (ms) at the emulator of the requests whose route key contains `routePart`, from `since` on. */
export async function requestTimes(emulatorUrl: string, since: Date, routePart: string): Promise<number[]> {
  const query = `since=${encodeURIComponent(since.toISOString())}&route=${encodeURIComponent(routePart)}`;
  const { requests } = await controlJson<{ requests: { at: string }[] }>(emulatorUrl, `/requests?${query}`);
  return requests.map((r) => Date.parse(r.at));
}

/** Platform calls the connector paid for: rows in the budget ledger. */
export async function ledgerDebits(db: Sql): Promise<number> {
  return (await db.query(`SELECT count(*)::int AS n FROM budget_debits`))[0].n as number;
}

/**
 * The platform calls made so far, counted twice: by the emulator (its SCIM daily counter, and its
 * request counters by route) and by the connector's budget ledger. The two must agree: a call the
 * ledger missed is a call the budget did not see.
 */
export type PlatformCalls = { emulator: number; byRoute: Record<string, number>; ledger: number };

export async function platformCalls(emulatorUrl: string, db: Sql): Promise<PlatformCalls> {
  const counts = await emulatorCounts(emulatorUrl);
  const byRoute = Object.fromEntries(Object.entries(counts.requests).filter(([route]) => route.includes(" /scim/")));
  return { emulator: counts.scimDaily.used, byRoute, ledger: await ledgerDebits(db) };
}

/** What was spent from `before` to `after`: routes that moved only, the emulator's and the ledger's totals. */
export function callsSpent(before: PlatformCalls, after: PlatformCalls): PlatformCalls {
  const byRoute: Record<string, number> = {};
  for (const [route, n] of Object.entries(after.byRoute)) {
    const moved = n - (before.byRoute[route] ?? 0);
    if (moved !== 0) byRoute[route] = moved;
  }
  return { emulator: after.emulator - before.emulator, byRoute, ledger: after.ledger - before.ledger };
}
