import type { PlatformEventImport, PlatformRecord } from "../platformRecord/frontDoor.js";
import type { PlatformImportResult } from "../platformRecord/importer.js";

/**
 * The /admin/platform page's data: the imports of the platform's Security Event report, newest
 * first, with what each read, kept and left out (docs/platform-record.md).
 */

/** Skipped lines shown per import; the rest are counted. */
const SKIPPED_SHOWN = 50;
const IMPORTS_SHOWN = 20;

export type ImportView = {
  id: number;
  at: string;
  source: string;
  actor: string | null;
  rows: number;
  imported: number;
  duplicates: number;
  skipped: { line: number; reason: string }[];
  /** Skipped lines beyond those shown. */
  moreSkipped: number;
};

export type PlatformRecordView = {
  imports: ImportView[];
  /** Where the daily export is read from, or null when SECURITY_EVENTS_S3_URI is unset. */
  exportSource: string | null;
};

function presentImport(row: PlatformEventImport): ImportView {
  return { ...row, at: row.at.toISOString(), ...shownSkipped(row.skipped) };
}

/** An import just made, as its page shows it: the counts, the lines left out, what the analysis found. */
export type ImportResultView = Omit<PlatformImportResult, "skipped"> & ReturnType<typeof shownSkipped>;

export function presentImportResult(result: PlatformImportResult): ImportResultView {
  return { ...result, ...shownSkipped(result.skipped) };
}

function shownSkipped(skipped: { line: number; reason: string }[]) {
  return { skipped: skipped.slice(0, SKIPPED_SHOWN), moreSkipped: Math.max(0, skipped.length - SKIPPED_SHOWN) };
}

export async function platformRecordView(
  record: Pick<PlatformRecord, "recentImports">,
  exportSource: string | null,
): Promise<PlatformRecordView> {
  return { imports: (await record.recentImports(IMPORTS_SHOWN)).map(presentImport), exportSource };
}
