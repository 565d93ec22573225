import { once } from "node:events";
import type { Writable } from "node:stream";
import type { Database } from "../../db/database.js";
import type { AccessReportOptions } from "../access/report.js";
import { csvLine } from "../csv.js";

/** What every file of the evidence pack is, and how it writes its bytes. */

export type EvidenceWindow = { from: Date; to: Date };
type EvidenceContext = { db: Database; access: AccessReportOptions; window: EvidenceWindow };

export type EvidenceFile = {
  path: string;
  description: string;
  controls: string[];
  /** Writes the file's bytes to `out` (not ended). */
  write(context: EvidenceContext, out: Writable): Promise<void>;
};

export type EvidenceSection = { name: string; files: EvidenceFile[] };

export async function write(out: Writable, text: string): Promise<void> {
  if (!out.write(text)) await once(out, "drain");
}

/** A CSV file's columns, in order: each header with how to read its cell from a row. */
export type CsvColumns<T> = Record<string, (row: T) => unknown>;

/**
 * Writes a CSV file: the header line, then each batch's rows (those `keep` keeps) as one write, so
 * a file streams from a cursor's batches without holding them all.
 */
export async function writeCsv<T>(
  out: Writable,
  columns: CsvColumns<T>,
  batches: AsyncIterable<T[]> | Iterable<T[]>,
  keep: (row: T) => boolean = () => true,
): Promise<void> {
  const cells = Object.values(columns);
  await write(out, csvLine(Object.keys(columns)));
  for await (const batch of batches) {
    const lines = batch.filter(keep).map((row) => csvLine(cells.map((cell) => cell(row))));
    if (lines.length) await write(out, lines.join(""));
  }
}
