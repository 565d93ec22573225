import type { AccessReport } from "../../admin/access/index.js";
import type { AdminActor } from "./actor.js";
import type { ApprovalsData } from "./ui/pages/approvals.js";
import type { LogFilter, LogPageData, LogRow } from "./ui/pages/log.js";
import type { LogEntryDetail } from "./ui/pages/logEntry.js";
import type { MappingData, MappingPreview } from "./ui/pages/mapping.js";
import type { MirrorData } from "./ui/pages/mirror.js";
import type { NotificationsData } from "./ui/pages/notifications.js";
import type { OverviewData } from "./ui/pages/overview.js";
import type { RunsData } from "./ui/pages/runs.js";
import type { UserDetail, UsersPageData, UsersQuery } from "./ui/pages/users.js";

/**
 * Where the admin UI's pages get their data, and what its buttons do: `createAdminData`
 * (src/admin/) provides every one. Throw AppErrors (NotFoundError, BadRequestError…) for the
 * user's mistakes: they become clear pages with that status.
 */
export type AdminDataSources = {
  overview(): Promise<OverviewData>;
  /** One page of the log: `offset` = (filter.page − 1) × limit; set hasNext by fetching one more. */
  log(filter: LogFilter, limit: number, offset: number): Promise<LogPageData>;
  /** Every entry the filter matches (newest first), for CSV/JSON export; cap it sensibly. */
  logExport(filter: LogFilter): Promise<LogRow[]>;
  logEntry(id: string): Promise<LogEntryDetail | undefined>;
  users(query: UsersQuery, limit: number, offset: number): Promise<UsersPageData>;
  user(id: string): Promise<UserDetail | undefined>;
  mapping(): Promise<MappingData>;
  /** Dry run of a draft mapping: nothing may change. */
  previewMapping(draft: string): Promise<MappingPreview>;
  approvals(): Promise<ApprovalsData>;
  runs(): Promise<RunsData>;
  mirror(): Promise<MirrorData>;
  notifications(): Promise<NotificationsData>;
  /** The access report (src/admin/access/): a page, and the whole report streamed as a file; built in service.ts. */
  access?: AccessReport;
};

/**
 * Admin actions. Each receives the actor so that it writes its log entry with who did it; the
 * UI has already checked the actor's role (policy.ts) and the CSRF token. Return a short
 * sentence for the confirmation message.
 */
export type AdminActions = {
  approve(ids: string[] | "all", actor: AdminActor): Promise<string>;
  reject(ids: string[] | "all", actor: AdminActor): Promise<string>;
  reconcileNow(userId: string, actor: AdminActor): Promise<string>;
  startResync(actor: AdminActor): Promise<string>;
  /** Lifts a platform family's quarantine (platform/quarantine.ts). */
  resumeFamily(family: string, actor: AdminActor): Promise<string>;
  /** Queues a test message for one configured channel (src/notify/). */
  sendTestNotification(channel: string, actor: AdminActor): Promise<string>;
};
