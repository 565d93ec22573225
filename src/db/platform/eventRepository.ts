import type { Database, Queryable } from "../database.js";
import type { PlatformEvent } from "../../platformRecord/events.js";

/**
 * The platform's Security Event record as stored (migrations/1763700002200-platform-record.ts):
 * each import, its events kept once by fingerprint, and the daily export's objects read.
 */

/** A line of the report left out, and why. */
export type SkippedLine = { line: number; reason: string };

export type PlatformEventImport = {
  id: number;
  at: Date;
  /** Where the events came from: `cli:FILE`, `api`, `upload:NAME`, `s3://bucket/key`. */
  source: string;
  actor: string | null;
  rows: number;
  imported: number;
  duplicates: number;
  skipped: SkippedLine[];
};

/** Opens an import's record; its counts are written by `finishImport` in the same transaction. */
export async function startImport(
  q: Queryable,
  start: { at: Date; source: string; actor: string | null; rows: number },
): Promise<number> {
  const [row] = await q.query<{ id: string }>(
    `INSERT INTO platform_event_imports (at, source, actor, rows, imported, duplicates)
     VALUES ($1, $2, $3, $4, 0, 0) RETURNING id`,
    [start.at, start.source, start.actor, start.rows],
  );
  return Number(row!.id);
}

export async function finishImport(
  q: Queryable,
  id: number,
  counts: { imported: number; duplicates: number; skipped: SkippedLine[] },
): Promise<void> {
  await q.execute(`UPDATE platform_event_imports SET imported = $2, duplicates = $3, skipped = $4 WHERE id = $1`, [
    id,
    counts.imported,
    counts.duplicates,
    JSON.stringify(counts.skipped),
  ]);
}

/** One statement per this many events: 10,000 rows go in ten. */
const INSERT_BATCH = 1_000;

/**
 * Stores the events not stored before (by fingerprint; a re-import or an overlapping report adds
 * nothing), in batches of one statement each. Returns how many were new.
 */
export async function insertEvents(
  q: Queryable,
  importId: number,
  importedAt: Date,
  events: readonly (PlatformEvent & { fingerprint: string })[],
): Promise<number> {
  let inserted = 0;
  for (let i = 0; i < events.length; i += INSERT_BATCH) {
    const batch = events.slice(i, i + INSERT_BATCH);
    const column = <K extends keyof (typeof batch)[number]>(key: K) => batch.map((e) => e[key]);
    const rows = await q.query(
      `INSERT INTO platform_events (fingerprint, at, actor, event, kind, account, ip, details, import_id, imported_at)
       SELECT f, a, ac, ev, k, acc, ip, d, $9, $10
         FROM unnest($1::text[], $2::timestamptz[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[])
              AS t(f, a, ac, ev, k, acc, ip, d)
       ON CONFLICT (fingerprint) DO NOTHING
       RETURNING 1`,
      [
        column("fingerprint"),
        batch.map((e) => e.at.toISOString()),
        column("actor"),
        column("event"),
        column("kind"),
        column("account"),
        column("ip"),
        column("details"),
        importId,
        importedAt,
      ],
    );
    inserted += rows.length;
  }
  return inserted;
}

/** The most recent imports, newest first. */
export async function recentImports(q: Queryable, limit: number): Promise<PlatformEventImport[]> {
  const rows = await q.query<{
    id: string;
    at: Date;
    source: string;
    actor: string | null;
    rows: number;
    imported: number;
    duplicates: number;
    skipped: SkippedLine[];
  }>(
    `SELECT id, at, source, actor, rows, imported, duplicates, skipped
       FROM platform_event_imports ORDER BY at DESC, id DESC LIMIT $1`,
    [limit],
  );
  return rows.map((r) => ({ ...r, id: Number(r.id) }));
}

/**
 * Claims an object of the daily export for reading in the caller's transaction: true when no
 * replica has read it under this ETag (a rewritten object is read again). A replica reading it
 * at the same time waits on the row until this transaction ends, then finds it read.
 */
export async function claimExportObject(q: Queryable, key: string, etag: string, at: Date): Promise<boolean> {
  const rows = await q.query(
    `INSERT INTO platform_export_objects (key, etag, read_at) VALUES ($1, $2, $3)
     ON CONFLICT (key) DO UPDATE SET etag = excluded.etag, read_at = excluded.read_at, import_id = NULL
       WHERE platform_export_objects.etag <> excluded.etag
     RETURNING key`,
    [key, etag, at],
  );
  return rows.length > 0;
}

export async function setExportObjectImport(q: Queryable, key: string, importId: number): Promise<void> {
  await q.execute(`UPDATE platform_export_objects SET import_id = $2 WHERE key = $1`, [key, importId]);
}

/** Keys and ETags of the export's objects already read, for a listing to skip them without a claim. */
export async function readExportObjects(q: Queryable, keys: readonly string[]): Promise<Map<string, string>> {
  const rows = await q.query<{ key: string; etag: string }>(
    `SELECT key, etag FROM platform_export_objects WHERE key = ANY($1::text[])`,
    [keys],
  );
  return new Map(rows.map((r) => [r.key, r.etag]));
}

/**
 * Events that happened before `cutoff`, and imports made before it (retention). The export's
 * objects stay listed as read, so an old object is not read again.
 */
export async function deletePlatformEventsBefore(q: Queryable, cutoff: Date): Promise<number> {
  const events = await q.execute(`DELETE FROM platform_events WHERE at < $1`, [cutoff]);
  await q.execute(`DELETE FROM platform_event_imports WHERE at < $1`, [cutoff]);
  return events;
}

/** The session advisory lock the daily export's poller holds while it reads (one replica at a time). */
const EXPORT_POLL_LOCK = 7_429_044;

/**
 * Runs `work` while this replica holds the export's lock, on a connection of its own; undefined,
 * without running it, when another replica holds it.
 */
export async function whileHoldingExportLock<T>(db: Database, work: () => Promise<T>): Promise<T | undefined> {
  return db.session(async (session) => {
    const [row] = await session.query<{ ok: boolean }>(`SELECT pg_try_advisory_lock($1) AS ok`, [EXPORT_POLL_LOCK]);
    if (!row?.ok) return undefined;
    try {
      return await work();
    } finally {
      await session.query(`SELECT pg_advisory_unlock($1)`, [EXPORT_POLL_LOCK]);
    }
  });
}
