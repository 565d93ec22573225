import type { Database } from "../../src/db/database.js";
import { ManualClock, type Clock } from "../../src/clock.js";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.js";
import { HttpTransport } from "../../src/platform/transport.js";
import { PlatformRestClient } from "../../src/platform/rest.js";
import { MirrorSyncWorker, type MirrorSyncWorkerOptions } from "../../src/mirror/worker.js";

export const API_KEY = "dev-api-key";

/** Records what reached the wire (parsed JSON bodies by route), then forwards with the real fetch. */
export class WireRecorder {
  readonly bodies: { method: string; path: string; body: unknown }[] = [];
  readonly fetch: typeof fetch = async (input, init) => {
    const url = new URL(String(input));
    this.bodies.push({
      method: init?.method ?? "GET",
      path: url.pathname,
      body: init?.body ? JSON.parse(String(init.body)) : undefined,
    });
    return fetch(input, init);
  };
  emailsSent(): string[] {
    return this.bodies.filter((b) => b.path === "/email/status").flatMap((b) => (b.body as { email: string[] }).email);
  }
}

export function makeWorker(
  db: Database,
  emulator: RunningEmulator,
  options: Partial<MirrorSyncWorkerOptions> & {
    clock?: Clock;
    recorder?: WireRecorder;
    apiKeys?: Record<string, string>;
  } = {},
): MirrorSyncWorker {
  const clock = options.clock ?? new ManualClock();
  const transport = new HttpTransport({
    baseUrl: emulator.url,
    clock,
    fetch: options.recorder?.fetch,
    timeoutMs: 10_000,
  });
  return new MirrorSyncWorker({
    db,
    rest: new PlatformRestClient(transport),
    apiKeys: options.apiKeys ?? { default: API_KEY },
    clock,
    ...options,
  });
}

export async function control<T = unknown>(
  emulator: RunningEmulator,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const res = await fetch(`${emulator.url}/_emulator${path}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

export async function requestCounts(emulator: RunningEmulator): Promise<Record<string, number>> {
  return (await control<{ requests: Record<string, number> }>(emulator, "GET", "/stats")).requests;
}

export { startEmulator };

/** ETL-style bulk upsert of email states in one statement. */
export async function upsertEmailStates(db: Database, rows: readonly [string, string][]): Promise<void> {
  for (let i = 0; i < rows.length; i += 5_000) {
    const slice = rows.slice(i, i + 5_000);
    await db.query(
      `INSERT INTO mirror.email_subscription_states (email, subscription_state)
       SELECT * FROM unnest($1::text[], $2::text[])
       ON CONFLICT (email) DO UPDATE SET subscription_state = EXCLUDED.subscription_state, updated_at = now()`,
      [slice.map((r) => r[0]), slice.map((r) => r[1])],
    );
  }
}

export async function pendingCount(db: Database, kind?: string): Promise<number> {
  const [row]: { n: number }[] = await db.query(
    `SELECT count(*)::int AS n FROM mirror_sync.pending WHERE $1::text IS NULL OR kind = $1`,
    [kind ?? null],
  );
  return row.n;
}
