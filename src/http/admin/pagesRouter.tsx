import { Router, type Request, type Response } from "express";
import type { ComponentChildren } from "preact";
import { NotFoundError } from "../../errors.js";
import { pageContext, renderPage } from "./ui/render.js";
import { accessRoutes } from "./accessPages.js";
import { ApprovalsPage } from "./ui/pages/approvals.js";
import { LOG_PAGE_SIZE, LogPage, parseLogFilter } from "./ui/pages/log.js";
import { LogEntryPage } from "./ui/pages/logEntry.js";
import { MappingPage } from "./ui/pages/mapping.js";
import { MirrorPage } from "./ui/pages/mirror.js";
import { NotificationsPage } from "./ui/pages/notifications.js";
import { CredentialsPage } from "./ui/pages/credentials.js";
import { OverviewPage } from "./ui/pages/overview.js";
import { RunsPage } from "./ui/pages/runs.js";
import { UserDetailPage, UsersPage } from "./ui/pages/users.js";
import { sendLogExport } from "./logExport.js";
import { requireAction } from "./policy.js";
import type { AdminDataSources } from "../../admin/sources.js";
import type { Evidence } from "../../review/evidence/frontDoor.js";

/** The read-only pages (every signed-in role may read). Handlers: parse, fetch from the source, render. */
export function pagesRouter(sources: AdminDataSources, evidence: Evidence): Router {
  const router = Router();

  router.get("/", async (req, res) => {
    const data = await sources.overview();
    renderPage(res, "Overview", <OverviewPage data={data} ctx={pageContext(req)} />, { nav: "overview" });
  });

  router.get("/log", async (req, res) => {
    const filter = parseLogFilter(req.query);
    const data = await sources.log(filter, LOG_PAGE_SIZE, (filter.page - 1) * LOG_PAGE_SIZE);
    renderPage(res, "Reconciliation log", <LogPage data={data} filter={filter} ctx={pageContext(req)} />, {
      nav: "log",
    });
  });

  router.get(["/log/export.csv", "/log/export.json"], async (req, res) => {
    const rows = await sources.logExport(parseLogFilter(req.query));
    sendLogExport(res, req.path.endsWith(".csv") ? "csv" : "json", rows);
  });

  router.get("/log/:id", async (req, res) => {
    const entry = await sources.logEntry(req.params.id);
    if (!entry) throw new NotFoundError("There is no log entry with that id");
    renderPage(res, "Log entry", <LogEntryPage entry={entry} ctx={pageContext(req)} />, { nav: "log" });
  });

  router.get("/users", async (req, res) => {
    const q = typeof req.query.q === "string" && req.query.q.trim() ? req.query.q.trim().slice(0, 200) : undefined;
    const page = Math.max(1, Number.parseInt(String(req.query.page ?? "1"), 10) || 1);
    const data = await sources.users({ q, page }, LOG_PAGE_SIZE, (page - 1) * LOG_PAGE_SIZE);
    renderPage(res, "Users", <UsersPage data={data} query={{ q, page }} ctx={pageContext(req)} />, { nav: "users" });
  });

  router.get("/users/:id", async (req, res) => {
    const user = await sources.user(req.params.id);
    if (!user) throw new NotFoundError("There is no user with that id");
    renderPage(res, user.userName, <UserDetailPage user={user} ctx={pageContext(req)} />, { nav: "users" });
  });

  router.get("/mapping", async (req, res) => {
    const data = await sources.mapping();
    renderPage(res, "Mapping", <MappingPage data={data} ctx={pageContext(req)} />, { nav: "mapping" });
  });

  // A preview changes nothing, but it runs the draft's rules over every user on this replica: it
  // needs the action of those who put mappings in force (src/policy.ts). A draft with problems is a 400.
  router.post("/mapping/preview", requireAction("mapping"), async (req: Request, res: Response) => {
    const draft = String((req.body as Record<string, unknown>)?.draft ?? "");
    const [data, preview] = await Promise.all([sources.mapping(), sources.previewMapping(draft)]);
    renderPage(res, "Mapping", <MappingPage data={data} draft={draft} preview={preview} ctx={pageContext(req)} />, {
      nav: "mapping",
      status: preview.errors.length ? 400 : 200,
    });
  });

  router.use(accessRoutes(sources, evidence));

  const simple = (
    path: string,
    title: string,
    nav: "approvals" | "runs" | "mirror" | "notifications" | "credentials",
    render: (req: Request) => Promise<ComponentChildren>,
  ) =>
    router.get(path, async (req, res) => {
      renderPage(res, title, await render(req), { nav });
    });
  simple("/approvals", "Approvals", "approvals", async (req) => (
    <ApprovalsPage data={await sources.approvals()} ctx={pageContext(req)} />
  ));
  simple("/runs", "Runs", "runs", async (req) => <RunsPage data={await sources.runs()} ctx={pageContext(req)} />);
  simple("/mirror", "Mirror", "mirror", async () => <MirrorPage data={await sources.mirror()} />);
  simple("/notifications", "Notifications", "notifications", async (req) => (
    <NotificationsPage data={await sources.notifications()} ctx={pageContext(req)} />
  ));
  simple("/credentials", "Credentials", "credentials", async () => (
    <CredentialsPage rows={await sources.credentials()} />
  ));

  return router;
}
