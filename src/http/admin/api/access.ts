import { Router, type Response } from "express";
import type { AccessQuery, AccessReport } from "../../../review/access/index.js";
import { accessQuerySchema, toAccessQuery, withoutEmpty } from "../../../review/access/query.js";
import { actorForLog } from "../../../admin/adminActor.js";
import { BadRequestError, TooManyRequestsError } from "../../../errors.js";
import { log } from "../../../logging/logger.js";
import { validate } from "../../validate.js";
import { actorOf } from "./auth.js";

/**
 * GET /access (JSON page, cursor paging; `?format=csv|json` streams the whole report as a file),
 * /access/totals and /access/differences. `?at=` answers as of that moment. Reads the database only.
 */
export function accessApiRouter(report: AccessReport): Router {
  const router = Router();

  router.get("/access", async (req, res) => {
    const input = parseQuery(req.query);
    const query = toAccessQuery(input);
    if (input.format) return sendAccessFile(res, report, query, input.format, actorOf(res));
    const page = await report.rows(query, input.cursor, input.limit ?? 100);
    if (!page) throw new BadRequestError("cursor: not a cursor this API gave");
    res.json({ at: query.at?.toISOString() ?? null, rows: page.rows, nextCursor: page.nextCursor });
  });

  router.get("/access/totals", async (req, res) => {
    const query = toAccessQuery(parseQuery(req.query));
    res.json({ at: query.at?.toISOString() ?? null, totals: await report.totals(query) });
  });

  router.get("/access/differences", async (_req, res) => {
    res.json(await report.differences());
  });
  return router;
}

function parseQuery(raw: unknown) {
  return validate(accessQuerySchema, withoutEmpty(raw as Record<string, unknown>), "query");
}

/** Who is exporting now (this process): one export per user at a time. */
const exporting = new Set<string>();
/** What a second export is told to wait: exports of a large report take seconds, not minutes. */
const EXPORT_RETRY_AFTER_SECONDS = 10;

/**
 * Streams the report, one export per `actor` at a time (a second answers 429 with Retry-After).
 * A client that goes away ends the export (its batches are freed); a failure after the first
 * byte can only cut the download short (and is logged).
 */
export async function sendAccessFile(
  res: Response,
  report: Pick<AccessReport, "export">,
  query: AccessQuery,
  format: "csv" | "json",
  actor: string,
): Promise<void> {
  if (exporting.has(actor)) {
    res.setHeader("Retry-After", String(EXPORT_RETRY_AFTER_SECONDS));
    throw new TooManyRequestsError("An export of the access report is already running for you; try again when it ends");
  }
  exporting.add(actor);
  const stamp = (query.at ?? new Date()).toISOString().slice(0, 10);
  res.setHeader("Content-Disposition", `attachment; filename="access-report-${stamp}.${format}"`);
  res.type(format === "csv" ? "text/csv" : "application/json");
  try {
    await report.export(query, format, res);
    res.end();
  } catch (error) {
    if (res.destroyed && !res.writableFinished) {
      log.info("admin", "access report download abandoned by the client", { actor: actorForLog(actor) });
      return;
    }
    if (!res.headersSent) throw error;
    log.error("admin", "access report export failed midway", { error });
    res.destroy();
  } finally {
    exporting.delete(actor);
  }
}
