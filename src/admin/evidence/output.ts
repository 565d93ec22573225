import { once } from "node:events";
import type { Writable } from "node:stream";
import type { Database } from "../../db/database.js";
import type { AccessReportOptions } from "../access/report.js";
import { csvCell } from "../csv.js";

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

export const csvLine = (cells: unknown[]) => `${cells.map(csvCell).join(",")}\r\n`;
