import express, { Router } from "express";
import { BadRequestError } from "../../../errors.js";
import type { PlatformRecord } from "../../../platformRecord/frontDoor.js";
import { actorOf } from "./auth.js";

/**
 * POST /platform/events (mounted under /admin/api, admin token): the platform's Security Event
 * report as a text/csv body, imported (docs/platform-record.md). 200 with the import's counts and
 * the lines skipped; 400 naming the headers found and looked for when the file is not the report.
 */
export function platformApiRouter(record: Pick<PlatformRecord, "importReport">): Router {
  const router = Router();
  const csvBody = express.text({ type: ["text/csv", "application/csv", "text/plain"], limit: "20mb" });
  router.post("/platform/events", csvBody, async (req, res) => {
    if (typeof req.body !== "string")
      throw new BadRequestError("Send the Security Event report as the body, with Content-Type: text/csv");
    res.json(await record.importReport({ text: req.body, source: "api", actor: actorOf(res) }));
  });
  return router;
}
