import type { Response } from "express";
import { rateLimit, requirePermission } from "../pipeline/auth.js";
import { badRequest, sendJson } from "../http.js";
import { decodeCursor, paginate } from "../engagement/cdiPages.js";
import { RATE_LIMITS } from "../pipeline/rateLimits.js";
import type { RouteContext } from "./context.js";

/**
 * Data integrations (from fixtures) and their sync job history. The list permission is not named
 * by the document; the emulator calls it `cdi.integration_list`.
 */

const CDI_LIST_PERMISSION = "cdi.integration_list";

function cursorOffset(raw: unknown, scope: string, total: number): number {
  if (raw === undefined) return 0;
  const offset = typeof raw === "string" ? decodeCursor(raw, scope, total) : undefined;
  if (offset === undefined) throw badRequest("Invalid cursor");
  return offset;
}

function sendPage(res: Response, page: { items: unknown[]; link?: string }): void {
  if (page.link) res.setHeader("Link", page.link);
  sendJson(res, 200, { results: page.items, message: "success" });
}

const startTime = (job: Record<string, unknown>) => Date.parse(String(job.sync_start_time ?? "")) || 0;

export function cdiRoutes({ state, auth, route }: RouteContext): void {
  route(
    "get",
    "/cdi/integrations",
    "/cdi/integrations",
    requirePermission(auth, CDI_LIST_PERMISSION),
    rateLimit(state, RATE_LIMITS.cdiList),
    (req, res) => {
      const offset = cursorOffset(req.query.cursor, "integrations", state.integrations.length);
      sendPage(res, paginate(state.integrations, offset, "/cdi/integrations", "integrations"));
    },
  );

  route(
    "get",
    "/cdi/integrations/:integration_id/job_sync_status",
    "/cdi/integrations/{integration_id}/job_sync_status",
    requirePermission(auth, "cdi.integration_job_status"),
    rateLimit(state, RATE_LIMITS.cdiJobStatus),
    (req, res) => {
      const id = String(req.params.integration_id);
      if (!state.integrationIds.has(id)) throw badRequest("Invalid integration ID");
      // Newest sync first.
      const jobs = [...(state.syncJobs.get(id) ?? [])].sort((a, b) => startTime(b) - startTime(a));
      const scope = `jobs:${id}`;
      const offset = cursorOffset(req.query.cursor, scope, jobs.length);
      sendPage(res, paginate(jobs, offset, `/cdi/integrations/${encodeURIComponent(id)}/job_sync_status`, scope));
    },
  );
}
