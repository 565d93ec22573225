import type { Router } from "express";
import { applyDashboardAction, parseDashboardAction } from "../dashboard/actions.js";
import { badRequest, bodyObject, restError, sendJson } from "../http.js";
import { ipOf, presentSecurityEvent, REPORT_ROWS, securityEventsCsv, utcDay } from "../security/events.js";
import type { SecurityExporter } from "../security/export.js";
import type { EmulatorState } from "../state.js";

/**
 * The control plane's dashboard: actions a person takes in the platform's dashboard, the
 * Security Event report it downloads, and the daily S3 export on demand. Mounted under
 * `/_emulator` (src/emulator/control.ts), so loopback callers only, like the rest of it.
 */

/** A real calendar day, `YYYY-MM-DD` (not 2026-02-30). */
function isDay(value: unknown): value is string {
  if (typeof value !== "string" || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const ms = Date.parse(`${value}T00:00:00Z`);
  return !Number.isNaN(ms) && utcDay(ms) === value;
}

export function dashboardRoutes(router: Router, state: EmulatorState, exporter: SecurityExporter | undefined): void {
  router.post("/dashboard", (req, res) => {
    const action = parseDashboardAction(bodyObject(req), ipOf(req.socket.remoteAddress));
    const created = applyDashboardAction(state, action);
    if (created) sendJson(res, 201, created);
    else res.status(204).end();
  });

  router.get("/security-events.csv", (_req, res) => {
    const csv = securityEventsCsv(state.securityEvents.recent(REPORT_ROWS));
    res.status(200).setHeader("Content-Type", "text/csv; charset=utf-8");
    res.setHeader("Content-Disposition", 'attachment; filename="security-events.csv"');
    res.end(csv);
  });

  router.get("/security-events", (_req, res) =>
    sendJson(res, 200, { events: state.securityEvents.recent(REPORT_ROWS).map(presentSecurityEvent) }),
  );

  router.post("/security-events/export", async (req, res) => {
    if (!exporter)
      throw restError(409, "No security export: start the emulator with --security-export s3://bucket/prefix");
    const { day } = bodyObject(req);
    if (day !== undefined && !isDay(day)) throw badRequest("day must be a date, YYYY-MM-DD");
    if (day !== undefined && day > utcDay(state.nowMs()))
      throw badRequest(`day ${day} is after the emulator's current day ${utcDay(state.nowMs())}`);
    let keys: string[];
    try {
      keys = await exporter.exportNow(day);
    } catch (error) {
      throw restError(502, `The export to s3://${exporter.bucket} failed: ${String(error)}`);
    }
    sendJson(res, 200, { bucket: exporter.bucket, keys });
  });
}
