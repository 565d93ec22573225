import type { Writable } from "node:stream";
import type { Database } from "../../db/database.js";
import type { DesiredAccess } from "../../mapping/desiredAccess.js";
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

/**
 * The access report, one per service (built in service.ts) for the admin UI and the JSON API: a
 * page for the UI (rows, totals, differences), its parts for the API, and the streamed export.
 */
export function createAccessReport(deps: { db: Database; desired: DesiredAccess }) {
  const options: AccessReportOptions = { db: deps.db, desired: deps.desired };
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
    /** A page of rows after `cursor`; undefined when the cursor is not one this report gave. */
    async rows(query: AccessQuery, cursor: string | undefined, limit: number) {
      const after = decodeCursor(cursor);
      if (cursor && !after) return undefined;
      return accessPage(options, query, after, limit);
    },
    totals: (query: AccessQuery) => accessTotals(options, query),
    differences: () => accessDifferences(options),
    export: (query: AccessQuery, format: "csv" | "json", out: Writable) =>
      writeAccessReport(options, query, format, out),
  };
}

export type AccessReport = ReturnType<typeof createAccessReport>;
