import type { AccessReport } from "../review/access/index.js";
import type { AdminActor } from "./adminActor.js";
import type { ApprovalsData } from "./approvals.js";
import type { LogEntryDetail, LogFilter, LogPageData, LogRow } from "./log.js";
import type { MappingData, MappingPreview } from "./mapping/mapping.js";
import type { MirrorData } from "./mirror.js";
import type { NotificationsData } from "./notifications.js";
import type { CredentialRow } from "./credentials.js";
import type { OverviewData } from "./overview.js";
import type { RunsData } from "./runs/runs.js";
import type { UserDetail, UsersPageData, UsersQuery } from "./users/users.js";

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
  /** Every IdP credential with kind, last use and expiry (src/admin/credentials.ts). */
  credentials(): Promise<CredentialRow[]>;
  /** The access report (src/review/access/): a page, and the whole report streamed as a file; built in service/http.ts. */
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
