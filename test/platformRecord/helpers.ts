import { createHash } from "node:crypto";
import type { Sql } from "../support/emulator.js";
import { eventKind } from "../../src/platformRecord/events.js";
import type { ManagedHandlers, StoredPlatformEvent } from "../../src/platformRecord/findings.js";

/**
 * Events of the platform's record put where an import puts them (platform_events, handled_at NULL),
 * each kept once by its fingerprint as the import keeps it; and handlers that record what they are
 * given, standing in for the handling of managed accounts (src/platformRecord/managedChanges.ts).
 */

export type EventInput = { at: Date; actor: string; event: string; account: string | null };

export async function insertEvents(db: Sql, events: EventInput[]): Promise<number> {
  let inserted = 0;
  for (const e of events) {
    const fingerprint = createHash("sha256")
      .update(JSON.stringify([e.at.toISOString(), e.actor, e.event, e.account]))
      .digest("hex");
    const rows = await db.query(
      `INSERT INTO platform_events (fingerprint, at, actor, event, kind, account, imported_at)
       VALUES ($1, $2, $3, $4, $5, $6, now()) ON CONFLICT (fingerprint) DO NOTHING RETURNING id`,
      [fingerprint, e.at, e.actor, e.event, eventKind(e.event), e.account?.toLowerCase() ?? null],
    );
    inserted += rows.length;
  }
  return inserted;
}

export function recordingHandlers(outcome = "reverted") {
  const calls = {
    managed: [] as { event: StoredPlatformEvent; userId: string }[],
    activity: [] as StoredPlatformEvent[],
    catalogue: [] as StoredPlatformEvent[],
  };
  const handlers: ManagedHandlers = {
    async onManagedAccountEvent(event, userId) {
      calls.managed.push({ event, userId });
      return outcome;
    },
    async recordActivity(event) {
      calls.activity.push(event);
    },
    async recordCatalogueEdit(event) {
      calls.catalogue.push(event);
    },
  };
  return { handlers, calls };
}

export async function outcomesOf(db: Sql, account: string): Promise<(string | null)[]> {
  const rows = await db.query(`SELECT outcome FROM platform_events WHERE account = $1 ORDER BY at, id`, [account]);
  return rows.map((r) => r.outcome as string | null);
}

export async function unmanagedRow(db: Sql, userName: string) {
  const rows = await db.query(`SELECT * FROM unmanaged_accounts WHERE user_name = $1`, [userName]);
  return rows[0] as Record<string, unknown> | undefined;
}

export async function discoverDebits(db: Sql): Promise<number> {
  return (await db.query(`SELECT count(*)::int AS n FROM budget_debits WHERE action = 'discover'`))[0].n as number;
}

export async function unmanagedAlerts(db: Sql): Promise<{ summary: string; details: Record<string, unknown> }[]> {
  return db.query(
    `SELECT summary, details FROM notification_outbox WHERE event = 'platform.unmanaged_account' ORDER BY id`,
  );
}
