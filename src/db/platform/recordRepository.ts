import type { Database, Queryable } from "../database.js";
import type { PlatformEvent } from "../../platformRecord/events.js";

/**
 * The analysis side of the platform's record (src/platformRecord/findings.ts): the events not yet
 * handled, read in (at, id) order under one advisory lock, what the connector knows of each event's
 * account (an IdP user, an account it created or adopted, a debit of its own near the event's time),
 * and each event's outcome once decided. Which debits count as the connector's own write of an event
 * is decided above (the actions are given here); the rows of unmanaged accounts are in
 * unmanagedAccountRepository.ts.
 */

/** One analysis at a time, on every replica (a session advisory lock; any other key is another lock). */
const ANALYSIS_LOCK = 7_429_044;

/** A row of platform_events as the analysis reads it. */
export type StoredPlatformEvent = PlatformEvent & { id: string };

/**
 * Runs `work` holding the analysis lock on a connection of its own: a second caller (another
 * replica's import) waits for the first and then finds what is left. The lock goes with the
 * connection if the process dies.
 */
export async function withAnalysisLock<T>(db: Database, work: () => Promise<T>): Promise<T> {
  return db.session(async (session) => {
    await session.query(`SELECT pg_advisory_lock($1)`, [ANALYSIS_LOCK]);
    try {
      return await work();
    } finally {
      await session.query(`SELECT pg_advisory_unlock($1)`, [ANALYSIS_LOCK]);
    }
  });
}

/** Unhandled events after the cursor (at, id), oldest first. */
export async function listUnhandledEvents(
  db: Queryable,
  after: { at: Date; id: string } | null,
  limit: number,
): Promise<StoredPlatformEvent[]> {
  return db.query<StoredPlatformEvent>(
    after
      ? `SELECT id::text AS id, at, actor, event, kind, account, ip, details FROM platform_events
          WHERE handled_at IS NULL AND (at, id) > ($2, $3::bigint) ORDER BY at, id LIMIT $1`
      : `SELECT id::text AS id, at, actor, event, kind, account, ip, details FROM platform_events
          WHERE handled_at IS NULL ORDER BY at, id LIMIT $1`,
    after ? [limit, after.at, after.id] : [limit],
  );
}

/** What the connector knows of one event's account (all false/null for an event naming none). */
export type AccountFacts = {
  /** The IdP user that has this email now, if any. */
  idpUserId: string | null;
  /** The user whose account the connector created or adopted under this email, if any. */
  accountUserId: string | null;
  /** Whether the event is a write the connector sent itself (one of `ownDebits`, picked by the analysis). */
  ownDebit: boolean;
};

/**
 * A debit of the connector's that may be the event: of one of the actions asked, for a user of this
 * email, within the window; with the events already explained by it (`explains`).
 */
export type OwnDebitCandidate = { id: string; action: string; explains: { kind: string; actor: string }[] };

export type KnownAccount = Omit<AccountFacts, "ownDebit"> & { ownDebits: OwnDebitCandidate[] };

/**
 * For each event: which IdP user and which connector account have its email, and the connector's
 * debits that may be it, nearest in time first.
 */
export async function accountFactsOf(
  db: Queryable,
  events: { id: string; at: Date; account: string | null; ownActions: readonly string[] }[],
  windowMinutes: number,
): Promise<Map<string, KnownAccount>> {
  if (!events.length) return new Map();
  const rows = await db.query<{
    id: string;
    idp_user_id: string | null;
    account_user_id: string | null;
    own_debits: OwnDebitCandidate[] | null;
  }>(
    `WITH ev AS (
       SELECT * FROM unnest($1::bigint[], $2::timestamptz[], $3::text[], $4::text[])
         AS e(id, at, account, actions)),
     known AS (
       SELECT ev.id, ev.at, ev.account, string_to_array(ev.actions, ',') AS actions,
              (SELECT u.id FROM idp_users u WHERE lower(u.user_name) = ev.account LIMIT 1) AS idp_user_id,
              (SELECT a.user_id FROM platform_accounts a WHERE lower(a.user_name) = ev.account LIMIT 1) AS account_user_id
         FROM ev),
     -- The users whose debits may be the event, as an array: their debits are read by user
     -- (budget_debits_user). The window is tested on the difference, not as a range of spent_at,
     -- so the planner cannot read them by time (budget_debits_spent_at): after a burst of writes
     -- (a provisioning, a resync) the window holds thousands of debits, read again for each event.
     users AS (
       SELECT k.*,
              CASE WHEN k.account IS NOT NULL AND cardinality(k.actions) > 0 THEN
                array_remove(ARRAY[k.idp_user_id, k.account_user_id], NULL)
                || ARRAY(SELECT l.user_id FROM reconcile_log l
                          WHERE lower(l.user_name) = k.account AND l.user_id IS NOT NULL
                            AND l.at BETWEEN k.at - make_interval(mins => $5) AND k.at + make_interval(mins => $5))
              END AS user_ids
         FROM known k)
     SELECT k.id::text AS id, k.idp_user_id, k.account_user_id,
            (SELECT json_agg(json_build_object(
                      'id', d.id::text, 'action', d.action,
                      'explains', (SELECT coalesce(json_agg(json_build_object('kind', pe.kind, 'actor', pe.actor)), '[]')
                                     FROM platform_events pe WHERE pe.own_debit_id = d.id))
                    ORDER BY abs(extract(epoch FROM d.spent_at - k.at)), d.id)
               FROM budget_debits d
              WHERE d.user_id IS NOT NULL AND d.user_id = ANY (k.user_ids)
                AND d.action = ANY (k.actions)
                AND abs(extract(epoch FROM d.spent_at - k.at)) <= $5 * 60) AS own_debits
       FROM users k`,
    [
      events.map((e) => e.id),
      events.map((e) => e.at),
      events.map((e) => e.account),
      events.map((e) => e.ownActions.join(",")),
      windowMinutes,
    ],
  );
  return new Map(
    rows.map((r) => [
      r.id,
      { idpUserId: r.idp_user_id, accountUserId: r.account_user_id, ownDebits: r.own_debits ?? [] },
    ]),
  );
}

/** Marks events handled, each with its outcome word (and the own write it was); an event already handled is left as it is. */
export async function markEventsHandled(
  db: Queryable,
  handled: { id: string; outcome: string; ownDebitId?: string }[],
  now: Date,
): Promise<void> {
  if (!handled.length) return;
  await db.query(
    `UPDATE platform_events e SET handled_at = $3, outcome = h.outcome, own_debit_id = h.debit
       FROM unnest($1::bigint[], $2::text[], $4::bigint[]) AS h(id, outcome, debit)
      WHERE e.id = h.id AND e.handled_at IS NULL`,
    [handled.map((h) => h.id), handled.map((h) => h.outcome), now, handled.map((h) => h.ownDebitId ?? null)],
  );
}
