import { Router, type Request, type Response } from "express";
import { actorForLog } from "../../admin/adminActor.js";
import { platformRecordView, presentImportResult } from "../../admin/platformRecord.js";
import { BadRequestError } from "../../errors.js";
import { log } from "../../logging/logger.js";
import type { PlatformRecord } from "../../platformRecord/frontDoor.js";
import { requireAction } from "./policy.js";
import { pageContext, renderPage } from "./ui/render.js";
import { PlatformPage } from "./ui/pages/platform.js";

/**
 * /admin/platform: the platform's own record (docs/platform-record.md). Every role reads the
 * imports; an admin uploads a report (the upload was parsed, and CSRF checked, before this router),
 * which answers with the page showing what that import read, kept and found, or, for a file that is
 * not the report, the refusal (400) naming the headers found and looked for.
 */
export type PlatformPagesDeps = {
  /** The platform's record, the one the JSON API and the CLI call (built once, in src/service/http.ts). */
  record: PlatformRecord;
  /** Where the daily export is read from (SECURITY_EVENTS_S3_URI), for the page to say. */
  exportSource: string | null;
};

export function platformRoutes(deps: PlatformPagesDeps): Router {
  const router = Router();
  const show = async (req: Request, res: Response, extra: Omit<Parameters<typeof PlatformPage>[0], "data" | "ctx">) => {
    const data = await platformRecordView(deps.record, deps.exportSource);
    renderPage(res, "Platform record", <PlatformPage data={data} ctx={pageContext(req)} {...extra} />, {
      nav: "platform",
      status: extra.refusal ? 400 : 200,
    });
  };

  router.get("/platform", requireAction("read"), (req, res) => show(req, res, {}));

  router.post("/platform/events", requireAction("platformEvents"), async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const actor = req.adminActor!;
    try {
      if (typeof body.report !== "string") throw new BadRequestError("Choose the report's file to import.");
      const result = await deps.record.importReport({
        text: body.report,
        source: `upload:${String(body.fileName ?? "").slice(0, 200)}`,
        actor: actor.name,
      });
      log.info("admin", "admin action", {
        action: "importPlatformEvents",
        actor: actorForLog(actor.name),
        via: actor.via,
      });
      await show(req, res, { result: presentImportResult(result) });
    } catch (error) {
      if (!(error instanceof BadRequestError)) throw error;
      await show(req, res, { refusal: error.message });
    }
  });
  return router;
}
