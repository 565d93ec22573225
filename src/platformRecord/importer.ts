import type { Clock } from "../clock.js";
import type { Env, EventColumnNames } from "../config/env.js";
import type { Database, Queryable } from "../db/database.js";
import { finishImport, insertEvents, startImport, type SkippedLine } from "../db/platform/eventRepository.js";
import { log } from "../logging/logger.js";
import { readSecurityEvents, type ReadReport } from "./csv.js";
import type { Findings } from "./events.js";

/**
 * An import of the platform's Security Event report (docs/platform-record.md), the one use case
 * behind `scim-connector platform events import`, POST /admin/api/platform/events, the
 * /admin/platform page's upload and the daily export's poller: read the file (a file that is not
 * the report is refused whole, before anything is stored), store its events once each in one
 * transaction, then ask the analysis what they mean.
 */

/** What every surface gives an import: the settings, and the analysis the service wires in. */
export type PlatformImportOptions = {
  /** SECURITY_EVENTS_COLUMNS. */
  columns?: EventColumnNames;
  /** PLATFORM_EVENTS_RETENTION_DAYS: an event older than this is not kept (0: all are). */
  retentionDays?: number;
  /** What the stored events mean (src/platformRecord/findings.ts), run after they are stored. */
  analyse?: () => Promise<Findings>;
};

export type PlatformImportDeps = PlatformImportOptions & { db: Database; clock: Clock };

export type PlatformImportInput = {
  text: string;
  /** Where it came from, for the imports' list: `cli:FILE`, `api`, `upload:NAME`, `s3://bucket/key`. */
  source: string;
  /** Who imported it (null: the export's poller). */
  actor: string | null;
};

export type PlatformImportResult = {
  importId: number;
  /** The report's rows (its header aside). */
  rows: number;
  /** Events stored now. */
  imported: number;
  /** Events stored before (by an earlier import, or twice in this file). */
  duplicates: number;
  skipped: SkippedLine[];
  findings: Findings | null;
};

export function platformImportOptions(env: Env): PlatformImportOptions {
  return { columns: env.SECURITY_EVENTS_COLUMNS, retentionDays: env.PLATFORM_EVENTS_RETENTION_DAYS };
}

export async function importPlatformEvents(
  deps: PlatformImportDeps,
  input: PlatformImportInput,
): Promise<PlatformImportResult> {
  const report = readSecurityEvents(input.text, deps.columns);
  const stored = await deps.db.transaction((tx) =>
    storeReport(tx, deps.clock.now(), report, input, deps.retentionDays),
  );
  return { ...stored, findings: await analyseAfterImport(deps) };
}

/** Stores a read report in the caller's transaction (the export's poller claims its object in the same one). */
export async function storeReport(
  tx: Queryable,
  now: Date,
  report: ReadReport,
  input: Omit<PlatformImportInput, "text">,
  retentionDays = 0,
): Promise<Omit<PlatformImportResult, "findings">> {
  const cutoff = retentionDays ? now.getTime() - retentionDays * 86_400_000 : -Infinity;
  const kept = report.events.filter((e) => e.at.getTime() >= cutoff);
  const skipped = [
    ...report.skipped,
    ...report.events
      .filter((e) => e.at.getTime() < cutoff)
      .map((e) => ({ line: e.line, reason: `older than PLATFORM_EVENTS_RETENTION_DAYS (${retentionDays} days)` })),
  ].sort((a, b) => a.line - b.line);
  const importId = await startImport(tx, { at: now, source: input.source, actor: input.actor, rows: report.rows });
  const imported = await insertEvents(tx, importId, now, kept);
  const duplicates = kept.length - imported;
  await finishImport(tx, importId, { imported, duplicates, skipped });
  log.info("platform-record", "security events imported", {
    importId,
    source: input.source,
    rows: report.rows,
    imported,
    duplicates,
    skipped: skipped.length,
  });
  return { importId, rows: report.rows, imported, duplicates, skipped };
}

/**
 * The analysis, once the events are stored. Its failure does not undo the import (the events are
 * kept, and the next import's analysis reads them): it is logged and the result says null.
 */
export async function analyseAfterImport(deps: Pick<PlatformImportOptions, "analyse">): Promise<Findings | null> {
  if (!deps.analyse) return null;
  try {
    return await deps.analyse();
  } catch (error) {
    log.error("platform-record", "analysis of imported events failed", { error });
    return null;
  }
}
