import type { Database, Queryable } from "../database.js";

/**
 * The notification outbox (migrations/1763700000800-notifications.ts, src/notify/). Writers call
 * `enqueueNotification` / `resolveIncident` with the transaction that changes the state the
 * message is about, so a message exists exactly when its cause was committed.
 *
 * Past ~300 lines: the outbox is one aggregate (enqueue, incidents, claim, delivery, the page's
 * list), many small functions over one table that share its locking rules.
 */

export type NotificationInput = {
  /** One open incident per key: the same condition seen again updates the waiting message instead of adding one. */
  key: string;
  event: string;
  occurredAt: Date;
  summary: string;
  details: Record<string, unknown>;
  /** Path under PUBLIC_URL for the message's link (e.g. /admin/approvals). */
  linkPath?: string;
};

/**
 * Opens the incident `key` and queues its message; when the incident is already open, refreshes
 * the details of its opening message (a wave of holds keeps one message whose count grows until
 * it is sent). Returns the incident id and whether a message was queued.
 */
export async function enqueueNotification(
  q: Queryable,
  n: NotificationInput,
): Promise<{ incidentId: string; queued: boolean }> {
  const inserted = await q.query<{ incident_id: string }>(
    `WITH opened AS (
         INSERT INTO notification_incidents (key, event, opened_at) VALUES ($1, $2, $3)
         ON CONFLICT (key) WHERE resolved_at IS NULL DO NOTHING RETURNING id)
       INSERT INTO notification_outbox (incident_id, event, occurred_at, summary, details, link_path)
       SELECT id, $2, $3, $4, $5, $6 FROM opened RETURNING incident_id`,
    [n.key, n.event, n.occurredAt, n.summary, JSON.stringify(n.details), n.linkPath ?? null],
  );
  if (inserted[0]) return { incidentId: inserted[0].incident_id, queued: true };
  const updated = await q.query<{ incident_id: string }>(
    `UPDATE notification_outbox o SET summary = $3, details = $4
         FROM notification_incidents i
        WHERE i.key = $1 AND i.resolved_at IS NULL AND o.incident_id = i.id AND o.event = $2
        RETURNING o.incident_id`,
    [n.key, n.event, n.summary, JSON.stringify(n.details)],
  );
  return { incidentId: updated[0]?.incident_id ?? "", queued: false };
}

/** Closes the open incident `key` and queues its resolution message (same incident id); false when none was open. */
export async function resolveIncident(q: Queryable, n: NotificationInput): Promise<boolean> {
  const rows = await q.query<{ id: string }>(
    `UPDATE notification_incidents SET resolved_at = $2 WHERE key = $1 AND resolved_at IS NULL RETURNING id`,
    [n.key, n.occurredAt],
  );
  if (!rows[0]) return false;
  await q.query(
    `INSERT INTO notification_outbox (incident_id, event, occurred_at, summary, details, link_path) VALUES ($1, $2, $3, $4, $5, $6)`,
    [rows[0].id, n.event, n.occurredAt, n.summary, JSON.stringify(n.details), n.linkPath ?? null],
  );
  return true;
}

export async function isIncidentOpen(q: Queryable, key: string): Promise<boolean> {
  const rows = (await q.query(`SELECT 1 FROM notification_incidents WHERE key = $1 AND resolved_at IS NULL`, [
    key,
  ])) as unknown[];
  return rows.length > 0;
}

/** A test message for one channel: its own incident, delivered to that channel only. */
export async function enqueueTestNotification(
  db: Database,
  channel: string,
  n: Omit<NotificationInput, "key">,
): Promise<string> {
  return db.transaction(async (tx) => {
    const [incident] = (await tx.query(
      `INSERT INTO notification_incidents (key, event, opened_at, resolved_at) VALUES ('test:' || gen_random_uuid(), $1, $2, $2) RETURNING id`,
      [n.event, n.occurredAt],
    )) as { id: string }[];
    const [outbox] = (await tx.query(
      `INSERT INTO notification_outbox (incident_id, event, occurred_at, summary, details, link_path, fanned_out)
       VALUES ($1, $2, $3, $4, $5, $6, true) RETURNING id`,
      [incident!.id, n.event, n.occurredAt, n.summary, JSON.stringify(n.details), n.linkPath ?? null],
    )) as { id: string }[];
    await tx.query(`INSERT INTO notification_deliveries (outbox_id, channel, next_attempt_at) VALUES ($1, $2, $3)`, [
      outbox!.id,
      channel,
      n.occurredAt,
    ]);
    return incident!.id;
  });
}

/** Makes one delivery per configured channel for messages not yet fanned out (a channel added later gets new messages only). */
export async function fanOutNotifications(db: Database, channels: string[], now: Date): Promise<number> {
  return db.transaction(async (tx) => {
    const rows = (await tx.query(
      `SELECT id FROM notification_outbox WHERE NOT fanned_out ORDER BY id LIMIT 100 FOR UPDATE SKIP LOCKED`,
    )) as { id: string }[];
    if (!rows.length) return 0;
    const ids = rows.map((r) => r.id);
    if (channels.length) {
      await tx.query(
        `INSERT INTO notification_deliveries (outbox_id, channel, next_attempt_at)
         SELECT o, c, $3 FROM unnest($1::bigint[]) o CROSS JOIN unnest($2::text[]) c ON CONFLICT DO NOTHING`,
        [ids, channels, now],
      );
    }
    await tx.query(`UPDATE notification_outbox SET fanned_out = true WHERE id = ANY($1::bigint[])`, [ids]);
    return ids.length;
  });
}

export type ClaimedDelivery = {
  outboxId: string;
  channel: string;
  attempts: number;
  incidentId: string;
  event: string;
  occurredAt: Date;
  summary: string;
  details: Record<string, unknown>;
  linkPath: string | null;
};

/**
 * Claims due deliveries for `owner` until `leaseUntil` (SKIP LOCKED: each goes to one replica).
 * The attempt is counted at the claim, so a sender killed mid-send still uses up an attempt.
 */
export async function claimDeliveries(
  db: Queryable,
  owner: string,
  now: Date,
  leaseUntil: Date,
  limit: number,
): Promise<ClaimedDelivery[]> {
  const rows = await db.query<ClaimedDelivery>(
    `WITH due AS (
         SELECT outbox_id, channel FROM notification_deliveries
          WHERE state = 'pending' AND next_attempt_at <= $2 AND (lease_until IS NULL OR lease_until <= $2)
          ORDER BY next_attempt_at, outbox_id LIMIT $4 FOR UPDATE SKIP LOCKED),
       claimed AS (
         UPDATE notification_deliveries d SET lease_owner = $1, lease_until = $3, attempts = d.attempts + 1
           FROM due WHERE d.outbox_id = due.outbox_id AND d.channel = due.channel
         RETURNING d.outbox_id, d.channel, d.attempts)
       SELECT c.outbox_id::text AS "outboxId", c.channel, c.attempts, o.incident_id AS "incidentId", o.event,
              o.occurred_at AS "occurredAt", o.summary, o.details, o.link_path AS "linkPath"
         FROM claimed c JOIN notification_outbox o ON o.id = c.outbox_id`,
    [owner, now, leaseUntil, limit],
  );
  return rows;
}

/** Settles a claimed delivery; false when the claim had lapsed and was taken over (the other sender settles it). */
export async function settleDelivery(
  db: Database,
  key: { outboxId: string; channel: string; owner: string },
  result: { state: "sent"; at: Date } | { state: "pending" | "parked"; nextAttemptAt: Date; error: string },
): Promise<boolean> {
  const rows = await db.query(
    `UPDATE notification_deliveries
          SET state = $4, sent_at = $5, next_attempt_at = COALESCE($6, next_attempt_at), last_error = COALESCE($7, last_error),
              lease_owner = NULL, lease_until = NULL
        WHERE outbox_id = $1 AND channel = $2 AND lease_owner = $3 RETURNING outbox_id`,
    [
      key.outboxId,
      key.channel,
      key.owner,
      result.state,
      result.state === "sent" ? result.at : null,
      result.state === "sent" ? null : result.nextAttemptAt,
      result.state === "sent" ? null : result.error,
    ],
  );
  return rows.length > 0;
}

export type OutboxEntry = {
  id: string;
  incidentId: string;
  event: string;
  occurredAt: Date;
  summary: string;
  deliveries: {
    channel: string;
    state: "pending" | "sent" | "parked";
    attempts: number;
    lastError: string | null;
    sentAt: string | null;
    nextAttemptAt: string;
  }[];
};

/** The newest messages with each channel's delivery (admin page and API). */
export async function listOutbox(db: Database, limit: number): Promise<OutboxEntry[]> {
  const rows = (await db.query(
    `SELECT o.id::text AS id, o.incident_id AS "incidentId", o.event, o.occurred_at AS "occurredAt", o.summary,
            COALESCE(json_agg(json_build_object('channel', d.channel, 'state', d.state, 'attempts', d.attempts, 'lastError', d.last_error,
              'sentAt', d.sent_at, 'nextAttemptAt', d.next_attempt_at) ORDER BY d.channel) FILTER (WHERE d.channel IS NOT NULL), '[]') AS deliveries
       FROM notification_outbox o LEFT JOIN notification_deliveries d ON d.outbox_id = o.id
      GROUP BY o.id ORDER BY o.id DESC LIMIT $1`,
    [limit],
  )) as OutboxEntry[];
  return rows;
}

/** When an authenticated SCIM request last arrived (any token), or null when none ever did. */
export async function lastIdpRequestAt(db: Database): Promise<Date | null> {
  const rows = (await db.query(`SELECT last_request_at AS at FROM idp_activity`)) as { at: Date }[];
  return rows[0]?.at ?? null;
}

export async function noteIdpRequest(db: Database, at: Date): Promise<void> {
  await db.query(
    `INSERT INTO idp_activity (id, last_request_at) VALUES (true, $1)
     ON CONFLICT (id) DO UPDATE SET last_request_at = GREATEST(idp_activity.last_request_at, EXCLUDED.last_request_at)`,
    [at],
  );
}

/** Users waiting in the reconcile queue, parked ones excluded (the budget.exhausted backlog). */
export async function countQueuedUsers(q: Queryable): Promise<number> {
  const rows = (await q.query(`SELECT count(*)::int AS n FROM reconcile_queue WHERE parked_at IS NULL`)) as {
    n: number;
  }[];
  return rows[0]?.n ?? 0;
}

/** Queued users whose change takes access away (deprovision and reduction priorities; pending deletes excluded). */
export async function countQueuedReductions(q: Queryable): Promise<number> {
  const rows = (await q.query(
    `SELECT count(*)::int AS n FROM reconcile_queue WHERE parked_at IS NULL AND priority <= 1 AND action IS DISTINCT FROM 'await-delete'`,
  )) as { n: number }[];
  return rows[0]?.n ?? 0;
}

/** The first drifted accounts logged since a run started (one full resync runs at a time), for drift.found. */
export async function firstDriftedUserNames(q: Queryable, since: Date, limit = 5): Promise<string[]> {
  const rows = (await q.query(
    `SELECT user_name FROM reconcile_log WHERE at >= $1 AND action = 'drift' AND user_name IS NOT NULL ORDER BY at, id LIMIT $2`,
    [since, limit],
  )) as { user_name: string }[];
  return rows.map((r) => r.user_name);
}

export type AlertFacts = {
  undecidedHolds: Record<string, number>;
  idpLastRequestAt: Date | null;
  deliveries: { channel: string; state: string; n: number }[];
  /** Per channel that has settled a delivery: whether its latest settled delivery was parked (a later sent one clears it). */
  channelFailing: Record<string, boolean>;
  lastResyncFailed: boolean;
  /** Grants held because the platform refuses legacy permission strings (0 when it does not). */
  heldForLegacy: number;
  /** Whether the platform refuses legacy permission strings (the platform.legacy_refused incident is open). */
  legacyRefused: boolean;
};

/** What the alert-rule metrics read at scrape time (docs/alerts/), in one round trip. */
export async function alertFacts(db: Database): Promise<AlertFacts> {
  const [row] = (await db.query(
    `SELECT
       (SELECT COALESCE(json_object_agg(kind, n), '{}') FROM (SELECT kind, count(*)::int AS n FROM reconcile_holds WHERE decision IS NULL GROUP BY kind) h) AS holds,
       (SELECT last_request_at FROM idp_activity) AS idp_last,
       (SELECT COALESCE(json_agg(json_build_object('channel', channel, 'state', state, 'n', n)), '[]')
          FROM (SELECT channel, state, count(*)::int AS n FROM notification_deliveries GROUP BY 1, 2) d) AS deliveries,
       (SELECT COALESCE(json_object_agg(channel, parked), '{}')
          FROM (SELECT DISTINCT ON (channel) channel, state = 'parked' AS parked FROM notification_deliveries
                 WHERE state <> 'pending' ORDER BY channel, outbox_id DESC) f) AS failing,
       (SELECT status = 'failed' FROM resync_runs WHERE finished_at IS NOT NULL AND NOT dry_run ORDER BY finished_at DESC LIMIT 1) AS last_failed,
       (SELECT CASE WHEN legacy_refused_at IS NULL THEN 0
                    ELSE 1 + (SELECT count(*)::int FROM reconcile_queue WHERE action = 'held-legacy') END
          FROM platform_permission_model WHERE id = 1) AS legacy_refused`,
  )) as {
    holds: Record<string, number>;
    idp_last: Date | null;
    deliveries: AlertFacts["deliveries"];
    failing: Record<string, boolean>;
    last_failed: boolean | null;
    legacy_refused: number | null;
  }[];
  return {
    undecidedHolds: row!.holds,
    idpLastRequestAt: row!.idp_last,
    deliveries: row!.deliveries,
    channelFailing: row!.failing,
    lastResyncFailed: row!.last_failed === true,
    heldForLegacy: Math.max(0, (row!.legacy_refused ?? 0) - 1),
    legacyRefused: (row!.legacy_refused ?? 0) > 0,
  };
}

/**
 * Removes incidents (with their messages and deliveries) older than `before` that are over:
 * resolved, or keyed to a day or a run (budget, mirror parks, drift, resync failures) and so never
 * seen again. Open incidents that can recur (approvals, quarantines, a silent IdP) are kept, or
 * their next occurrence would look new. Nothing with a delivery still pending is removed.
 */
export async function pruneNotifications(db: Database, before: Date): Promise<number> {
  const rows = await db.query<{ id: string }>(
    `DELETE FROM notification_incidents i
        WHERE i.opened_at < $1
          AND (i.resolved_at IS NOT NULL OR i.key ~ '^(budget|mirror\\.parked|drift|resync):')
          AND NOT EXISTS (SELECT 1 FROM notification_outbox o JOIN notification_deliveries d ON d.outbox_id = o.id
                           WHERE o.incident_id = i.id AND d.state = 'pending')
        RETURNING i.id`,
    [before],
  );
  return rows.length;
}
