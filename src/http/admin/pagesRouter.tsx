import { Router, type Request, type Response } from "express";
import { NotFoundError } from "../../errors.js";
import { NoData } from "./ui/components/basics.js";
import { pageContext, renderPage } from "./ui/render.js";
import { accessRoutes } from "./accessPages.js";
import { ApprovalsPage } from "./ui/pages/approvals.js";
import { LOG_PAGE_SIZE, LogPage, parseLogFilter } from "./ui/pages/log.js";
import { LogEntryPage } from "./ui/pages/logEntry.js";
import { MappingPage } from "./ui/pages/mapping.js";
import { MirrorPage } from "./ui/pages/mirror.js";
import { NotificationsPage } from "./ui/pages/notifications.js";
import { OverviewPage } from "./ui/pages/overview.js";
import { RunsPage } from "./ui/pages/runs.js";
import { UserDetailPage, UsersPage } from "./ui/pages/users.js";
import { sendLogExport } from "./logExport.js";
import type { AdminDataSources } from "./sources.js";

/** The read-only pages (every signed-in role may read). Handlers: parse, fetch from the source, render. */
export function pagesRouter(sources: AdminDataSources): Router {
  const router = Router();
  const missing = (what: string) => <NoData>{`${what} is not available in this build yet.`}</NoData>;

  router.get("/", async (req, res) => {
    const data = sources.overview ? await sources.overview() : undefined;
    renderPage(res, "Overview", <OverviewPage data={data} ctx={pageContext(req)} />, { nav: "overview" });
  });

  router.get("/log", async (req, res) => {
    const filter = parseLogFilter(req.query);
    if (!sources.log) return renderPage(res, "Reconciliation log", missing("The reconciliation log"), { nav: "log" });
    const data = await sources.log(filter, LOG_PAGE_SIZE, (filter.page - 1) * LOG_PAGE_SIZE);
    renderPage(res, "Reconciliation log", <LogPage data={data} filter={filter} ctx={pageContext(req)} />, { nav: "log" });
  });

  router.get(["/log/export.csv", "/log/export.json"], async (req, res) => {
    if (!sources.logExport) throw new NotFoundError("Log export is not available in this build yet");
    const rows = await sources.logExport(parseLogFilter(req.query));
    sendLogExport(res, req.path.endsWith(".csv") ? "csv" : "json", rows);
  });

  router.get("/log/:id", async (req, res) => {
    const entry = sources.logEntry ? await sources.logEntry(req.params.id) : undefined;
    if (!entry) throw new NotFoundError("There is no log entry with that id");
    renderPage(res, "Log entry", <LogEntryPage entry={entry} ctx={pageContext(req)} />, { nav: "log" });
  });

  router.get("/users", async (req, res) => {
    const q = typeof req.query.q === "string" && req.query.q.trim() ? req.query.q.trim().slice(0, 200) : undefined;
    const page = Math.max(1, Number.parseInt(String(req.query.page ?? "1"), 10) || 1);
    if (!sources.users) return renderPage(res, "Users", missing("The user list"), { nav: "users" });
    const data = await sources.users({ q, page }, LOG_PAGE_SIZE, (page - 1) * LOG_PAGE_SIZE);
    renderPage(res, "Users", <UsersPage data={data} query={{ q, page }} ctx={pageContext(req)} />, { nav: "users" });
  });

  router.get("/users/:id", async (req, res) => {
    const user = sources.user ? await sources.user(req.params.id) : undefined;
    if (!user) throw new NotFoundError("There is no user with that id");
    renderPage(res, user.userName, <UserDetailPage user={user} ctx={pageContext(req)} />, { nav: "users" });
  });

  router.get("/mapping", async (req, res) => {
    const data = sources.mapping ? await sources.mapping() : undefined;
    renderPage(res, "Mapping", <MappingPage data={data} ctx={pageContext(req)} />, { nav: "mapping" });
  });

  // A preview changes nothing, so viewers may run it; it is a POST only because drafts are long.
  router.post("/mapping/preview", async (req: Request, res: Response) => {
    const draft = String((req.body as Record<string, unknown>)?.draft ?? "");
    const data = sources.mapping ? await sources.mapping() : undefined;
    const preview = sources.previewMapping
      ? await sources.previewMapping(draft)
      : { errors: ["Mapping preview is not available in this build yet."], changes: [], usersAffected: 0, estimatedCalls: 0, durationLabel: "" };
    renderPage(res, "Mapping", <MappingPage data={data} draft={draft} preview={preview} ctx={pageContext(req)} />, { nav: "mapping" });
  });

  router.use(accessRoutes(sources));

  const simple = (path: string, title: string, nav: "approvals" | "runs" | "mirror" | "notifications", render: (req: Request) => Promise<unknown>) =>
    router.get(path, async (req, res) => {
      const body = await render(req);
      renderPage(res, title, body ?? missing(title), { nav });
    });
  simple("/approvals", "Approvals", "approvals", async (req) =>
    sources.approvals ? <ApprovalsPage data={await sources.approvals()} ctx={pageContext(req)} /> : undefined,
  );
  simple("/runs", "Runs", "runs", async (req) => (sources.runs ? <RunsPage data={await sources.runs()} ctx={pageContext(req)} /> : undefined));
  simple("/mirror", "Mirror", "mirror", async () => (sources.mirror ? <MirrorPage data={await sources.mirror()} /> : undefined));
  simple("/notifications", "Notifications", "notifications", async (req) =>
    sources.notifications ? <NotificationsPage data={await sources.notifications()} ctx={pageContext(req)} /> : undefined,
  );

  return router;
}
