import { Router, type Request } from "express";
import { accessQuerySchema, toAccessQuery, withoutEmpty } from "../../review/access/index.js";
import { BadRequestError, NotFoundError } from "../../errors.js";
import { sendAccessFile } from "./api/access.js";
import { sendEvidencePack } from "./api/evidence.js";
import type { Evidence } from "../../review/evidence/frontDoor.js";
import { requireAction } from "./policy.js";
import { pageContext, renderMessagePage, renderPage } from "./ui/render.js";
import { ACCESS_FORM_FIELDS, AccessPage, EvidenceAnywayForm, type AccessForm } from "./ui/pages/access.js";
import { UnverifiedChainError } from "../../review/evidence/chains.js";
import type { AdminDataSources } from "../../admin/sources.js";

const PAGE_SIZE = 100;

/** The form as typed: text fields trimmed; `at` from a datetime-local input is read as UTC. */
function formOf(req: Request): AccessForm {
  const form: AccessForm = {};
  for (const key of [...ACCESS_FORM_FIELDS, "cursor", "totals"] as const) {
    const v = req.query[key];
    if (typeof v === "string" && v.trim()) form[key] = v.trim().slice(0, 300);
  }
  return form;
}

function queryOf(form: AccessForm) {
  const at =
    form.at && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(form.at)
      ? `${form.at.length === 16 ? `${form.at}:00` : form.at}Z`
      : form.at;
  const parsed = accessQuerySchema.safeParse(withoutEmpty({ ...form, at, totals: undefined }));
  if (!parsed.success)
    throw new BadRequestError(parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "));
  return toAccessQuery(parsed.data);
}

/**
 * GET /access (the page), /access/export.csv|json (the whole filtered report, streamed) and, for
 * admins, POST /access/evidence (from, to: the signed evidence pack, as /admin/api/evidence writes
 * it; over a chain that does not verify, a page saying so with a button to download it anyway). A
 * POST, so that the CSRF check guards it: a pack reads the whole log over its window, and a GET
 * any site could make a signed-in admin's browser fetch (one pack per admin at a time).
 */
export function accessRoutes(sources: AdminDataSources, evidence: Evidence): Router {
  const router = Router();
  router.get("/access", async (req, res) => {
    if (!sources.access) throw new NotFoundError("The access report is not available in this build");
    const form = formOf(req);
    const data = await sources.access.page(queryOf(form), form.cursor, PAGE_SIZE, form.totals === "1");
    const page = (
      <AccessPage data={data} form={form} evidence={{ signingKey: evidence.canSign }} ctx={pageContext(req)} />
    );
    renderPage(res, "Access review", page, { nav: "access" });
  });
  router.get(["/access/export.csv", "/access/export.json"], async (req, res) => {
    if (!sources.access) throw new NotFoundError("The access report is not available in this build");
    const query = queryOf(formOf(req));
    const format = req.path.endsWith(".csv") ? "csv" : "json";
    await sendAccessFile(res, sources.access, query, format, req.adminActor?.name ?? "admin");
  });
  router.get("/access/evidence", (_req, res) =>
    renderMessagePage(
      res,
      405,
      "Download the evidence pack from the Access review page",
      "The evidence pack is written on the Access review page's Evidence pack button (a form this site sends), not from a link.",
    ),
  );
  router.post("/access/evidence", requireAction("evidence"), async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const text = (name: string) => (typeof body[name] === "string" ? body[name] : undefined);
    const [from, to] = [text("from"), text("to")];
    const actor = req.adminActor?.name ?? "admin";
    try {
      await sendEvidencePack(evidence, from, to, res, {
        acceptUnverifiedChain: text("acceptUnverifiedChain") === "true",
        actor,
      });
    } catch (error) {
      if (!(error instanceof UnverifiedChainError)) throw error;
      renderMessagePage(
        res,
        409,
        "The evidence pack cannot vouch for the log",
        `No pack was written: ${error.notices.join("; ")}. A pack written now says so, and scim-connector evidence verify fails on it; scim-connector audit verify names the bad entries.`,
        <EvidenceAnywayForm from={from ?? ""} to={to ?? ""} ctx={pageContext(req)} />,
      );
    }
  });
  return router;
}
