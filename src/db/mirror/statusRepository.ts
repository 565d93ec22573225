import type { Database } from "../database.js";
import type { MirrorKind } from "./syncRepository.js";

/** Read side of the mirror sync for the admin API, the UI and the metrics. */

export type PendingSummary = {
  kind: MirrorKind;
  pending: number;
  inFlight: number;
  parked: number;
  /** Age in seconds of the oldest change not yet pushed (parked rows excluded), or null. */
  oldestPendingSeconds: number | null;
};

export async function pendingSummary(db: Database, now: Date): Promise<PendingSummary[]> {
  const rows: { kind: MirrorKind; pending: number; in_flight: number; parked: number; oldest: number | null }[] =
    await db.query(
      `SELECT kind,
            count(*) FILTER (WHERE parked_at IS NULL)::int AS pending,
            count(*) FILTER (WHERE parked_at IS NULL AND claimed_until > $1)::int AS in_flight,
            count(*) FILTER (WHERE parked_at IS NOT NULL)::int AS parked,
            extract(epoch FROM $1::timestamptz - min(first_changed_at) FILTER (WHERE parked_at IS NULL))::float8 AS oldest
       FROM mirror_sync.pending GROUP BY kind`,
      [now],
    );
  const byKind = new Map(rows.map((r) => [r.kind, r]));
  return (["email", "subscription_group", "preference_center"] as const).map((kind) => {
    const r = byKind.get(kind);
    return {
      kind,
      pending: r?.pending ?? 0,
      inFlight: r?.in_flight ?? 0,
      parked: r?.parked ?? 0,
      oldestPendingSeconds: r?.oldest === null || r?.oldest === undefined ? null : Math.max(0, Math.round(r.oldest)),
    };
  });
}

export type ParkedRow = {
  kind: MirrorKind;
  key: string;
  value: unknown;
  reason: string;
  parkedAt: string;
  attempts: number;
};

/** Parked changes, newest first. Page HTML is left out: the admin needs the key and the reason. */
export async function listParkedChanges(
  db: Database,
  options: { kind?: MirrorKind; limit: number },
): Promise<ParkedRow[]> {
  const rows: {
    kind: MirrorKind;
    key: string;
    value: unknown;
    park_reason: string;
    parked_at: Date;
    attempts: number;
  }[] = await db.query(
    `SELECT kind, key, payload - 'page_html' - 'confirmation_html' AS value, park_reason, parked_at, attempts
       FROM mirror_sync.pending
      WHERE parked_at IS NOT NULL AND ($1::text IS NULL OR kind = $1)
      ORDER BY parked_at DESC, kind, key
      LIMIT $2`,
    [options.kind ?? null, options.limit],
  );
  return rows.map((r) => ({
    kind: r.kind,
    key: r.key,
    value: r.value,
    reason: r.park_reason,
    parkedAt: new Date(r.parked_at).toISOString(),
    attempts: r.attempts,
  }));
}

/** Puts parked changes back in line (after the ETL data or the configuration was fixed). */
export async function requeueParkedChanges(
  db: Database,
  options: { kind?: MirrorKind; keys?: string[] },
): Promise<number> {
  return db.execute(
    `UPDATE mirror_sync.pending SET parked_at = NULL, park_reason = NULL, attempts = 0, first_changed_at = now()
      WHERE parked_at IS NOT NULL AND ($1::text IS NULL OR kind = $1) AND ($2::text[] IS NULL OR key = ANY($2))`,
    [options.kind ?? null, options.keys ?? null],
  );
}

export type PushLogRow = {
  id: number;
  at: string;
  kind: MirrorKind;
  endpoint: string;
  workspace: string | null;
  changes: number;
  outcome: string;
  status: number | null;
  detail: string | null;
};

type PushLogRecord = Omit<PushLogRow, "at" | "id"> & { id: string; at: Date };
const mapPushLog = (r: PushLogRecord): PushLogRow => ({ ...r, id: Number(r.id), at: new Date(r.at).toISOString() });

/** The latest request of each kind (what "last push" means on the status page). */
export async function lastPushes(db: Database): Promise<PushLogRow[]> {
  const rows: PushLogRecord[] = await db.query(
    `SELECT DISTINCT ON (kind) id, at, kind, endpoint, workspace, changes, outcome, status, detail
       FROM mirror_sync.push_log ORDER BY kind, id DESC`,
  );
  return rows.map(mapPushLog);
}

/** The mirror-sync log, newest first, paged by id. */
export async function listPushLog(
  db: Database,
  options: { beforeId?: number; limit: number; kind?: MirrorKind },
): Promise<PushLogRow[]> {
  const rows: PushLogRecord[] = await db.query(
    `SELECT id, at, kind, endpoint, workspace, changes, outcome, status, detail
       FROM mirror_sync.push_log
      WHERE ($1::bigint IS NULL OR id < $1) AND ($2::text IS NULL OR kind = $2)
      ORDER BY id DESC LIMIT $3`,
    [options.beforeId ?? null, options.kind ?? null, options.limit],
  );
  return rows.map(mapPushLog);
}
