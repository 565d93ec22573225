import type { Writable } from "node:stream";
import type { Database } from "../../db/database.js";
import { writeAccessReport } from "./export.js";
import {
  accessDifferences,
  accessPage,
  accessTotals,
  decodeCursor,
  type AccessQuery,
  type AccessReportOptions,
} from "./report.js";

export { accessQuerySchema, toAccessQuery, withoutEmpty } from "./query.js";
export type { AccessQuery, AccessRow } from "./report.js";

export type AccessPageData = {
  query: AccessQuery;
  rows: Awaited<ReturnType<typeof accessPage>>["rows"];
  nextCursor: string | null;
  /** Only when asked for (`totals`): they count every account. */
  totals: Awaited<ReturnType<typeof accessTotals>> | null;
  differences: Awaited<ReturnType<typeof accessDifferences>>;
};

/** The access report for the admin UI: a page (rows, totals, differences) and the streamed export. */
export function createAccessReport(deps: { db: Database; mappingFile?: string }) {
  const options: AccessReportOptions = {
    db: deps.db,
    ...(deps.mappingFile ? { mappingSource: deps.mappingFile } : {}),
  };
  return {
    async page(
      query: AccessQuery,
      cursor: string | undefined,
      limit: number,
      withTotals = false,
    ): Promise<AccessPageData> {
      const [page, totals, differences] = await Promise.all([
        accessPage(options, query, decodeCursor(cursor), limit),
        withTotals ? accessTotals(options, query) : null,
        accessDifferences(options),
      ]);
      return { query, rows: page.rows, nextCursor: page.nextCursor, totals, differences };
    },
    export: (query: AccessQuery, format: "csv" | "json", out: Writable) =>
      writeAccessReport(options, query, format, out),
  };
}

export type AccessReport = ReturnType<typeof createAccessReport>;
