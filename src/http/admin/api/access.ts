import { Router, type Response } from "express";
import type { Database } from "../../../db/database.js";
import { createAccessReport, type AccessQuery, type AccessReport } from "../../../admin/access/index.js";
import { accessQuerySchema, toAccessQuery, withoutEmpty } from "../../../admin/access/query.js";
import { accessDifferences, accessPage, accessTotals, decodeCursor } from "../../../admin/access/report.js";
import { BadRequestError } from "../../../errors.js";
import { log } from "../../../logging/logger.js";

/**
 * GET /access (JSON page, cursor paging; `?format=csv|json` streams the whole report as a file),
 * /access/totals and /access/differences. `?at=` answers as of that moment. Reads the database only.
 */
export function accessApiRouter(deps: { db: Database; mappingFile?: string }): Router {
  const router = Router();
  const options = { db: deps.db, ...(deps.mappingFile ? { mappingSource: deps.mappingFile } : {}) };
  const report = createAccessReport(deps);

  router.get("/access", async (req, res) => {
    const input = parseQuery(req.query);
    const query = toAccessQuery(input);
    if (input.format) return sendAccessFile(res, report, query, input.format);
    const cursor = decodeCursor(input.cursor);
    if (input.cursor && !cursor) throw new BadRequestError("cursor: not a cursor this API gave");
    const page = await accessPage(options, query, cursor, input.limit ?? 100);
    res.json({ at: query.at?.toISOString() ?? null, rows: page.rows, nextCursor: page.nextCursor });
  });

  router.get("/access/totals", async (req, res) => {
    const query = toAccessQuery(parseQuery(req.query));
    res.json({ at: query.at?.toISOString() ?? null, totals: await accessTotals(options, query) });
  });

  router.get("/access/differences", async (_req, res) => {
    res.json(await accessDifferences(options));
  });
  return router;
}

function parseQuery(raw: unknown) {
  const result = accessQuerySchema.safeParse(withoutEmpty(raw as Record<string, unknown>));
  if (!result.success)
    throw new BadRequestError(result.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "));
  return result.data;
}

/** Streams the report; a failure after the first byte can only cut the download short (and is logged). */
export async function sendAccessFile(
  res: Response,
  report: Pick<AccessReport, "export">,
  query: AccessQuery,
  format: "csv" | "json",
): Promise<void> {
  const stamp = (query.at ?? new Date()).toISOString().slice(0, 10);
  res.setHeader("Content-Disposition", `attachment; filename="access-report-${stamp}.${format}"`);
  res.type(format === "csv" ? "text/csv" : "application/json");
  try {
    await report.export(query, format, res);
    res.end();
  } catch (error) {
    if (!res.headersSent) throw error;
    log.error("admin", "access report export failed midway", { error });
    res.destroy();
  }
}
