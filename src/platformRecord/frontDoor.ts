import type { Clock } from "../clock.js";
import type { Database } from "../db/database.js";
import { recentImports, type PlatformEventImport } from "../db/platform/eventRepository.js";
import {
  importPlatformEvents,
  type PlatformImportInput,
  type PlatformImportOptions,
  type PlatformImportResult,
} from "./importer.js";
import { listUnmanaged, type UnmanagedAccountView } from "./unmanaged.js";

export type { PlatformEventImport } from "../db/platform/eventRepository.js";

/**
 * The platform's record (docs/platform-record.md) as every surface asks it: the JSON API, the
 * /admin/platform page and the CLI call this one object, built once with the import's settings and
 * the analysis the service wires in (src/service/http.ts, src/cli/platform.ts).
 */
export type PlatformRecord = {
  /** Imports a Security Event report: stored once per event, then analysed (importer.ts). */
  importReport(input: PlatformImportInput): Promise<PlatformImportResult>;
  /** The accounts made by hand that the IdP does not manage (unmanaged.ts); `all` adds the absent and removed. */
  unmanaged(options?: { all?: boolean }): Promise<UnmanagedAccountView[]>;
  /** The latest imports, newest first. */
  recentImports(limit: number): Promise<PlatformEventImport[]>;
};

export function createPlatformRecord(deps: PlatformImportOptions & { db: Database; clock: Clock }): PlatformRecord {
  const { db } = deps;
  return {
    importReport: (input) => importPlatformEvents(deps, input),
    unmanaged: (options = {}) => listUnmanaged(db, options),
    recentImports: (limit) => recentImports(db, limit),
  };
}
