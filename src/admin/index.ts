import type { AdminActions, AdminDataSources } from "./sources.js";
import { approvalsData, decideHolds } from "./approvals.js";
import type { AdminDataDeps } from "./deps.js";
import { logEntry, logExport, logPage } from "./log.js";
import { mappingData, previewMapping } from "./mapping/mapping.js";
import { mirrorPageData } from "./mirror.js";
import { sendTestNotification } from "./notifications.js";
import { listCredentials } from "./credentials.js";
import { overviewData, resumeFamily } from "./overview.js";
import { reconcileUserNow, reconcileWithReceipt } from "./users/reconcileNow.js";
import { runsData, startResyncNow } from "./runs/runs.js";
import { userDetail, usersPage } from "./users/users.js";

export type { AdminDataDeps } from "./deps.js";

/**
 * The admin UI's data sources and actions, from the repositories, the reconciler, the resync
 * job, the quarantine and the notifications. Mappings are applied by editing MAPPING_FILE
 * (mapping.ts APPLY_BY_FILE); the UI only previews drafts.
 */
export function createAdminData(deps: AdminDataDeps): {
  sources: AdminDataSources;
  actions: AdminActions;
  /** Reconcile now for the JSON API (POST /admin/api/users/:id/reconcile): the same receipt in the log; answers the result. */
  apiReconcileNow: (userId: string, actor: string) => Promise<unknown>;
} {
  const sources: AdminDataSources = {
    overview: () => overviewData(deps),
    log: (filter, limit, offset) => logPage(deps, filter, limit, offset),
    logExport: (filter) => logExport(deps, filter),
    logEntry: (id) => logEntry(deps, id),
    users: (query, limit, offset) => usersPage(deps, query, limit, offset),
    user: (id) => userDetail(deps, id),
    mapping: async () => mappingData(deps),
    previewMapping: (draft) => previewMapping(deps, draft),
    approvals: () => approvalsData(deps),
    mirror: () => mirrorPageData(deps.db, deps.clock.now()),
    notifications: () => deps.notifications.status(),
    credentials: () => listCredentials(deps.db, deps.clock.now()),
    runs: () => runsData(deps.resync),
  };
  const actions: AdminActions = {
    approve: (ids, actor) => decideHolds(deps, ids, "approved", actor),
    reject: (ids, actor) => decideHolds(deps, ids, "rejected", actor),
    reconcileNow: (userId, actor) => reconcileUserNow(deps, userId, actor),
    startResync: (actor) => startResyncNow(deps.resync, actor),
    resumeFamily: (family, actor) => resumeFamily(deps.quarantine, family, actor),
    sendTestNotification: (channel, actor) => sendTestNotification(deps.notifications, channel, actor),
  };
  const apiReconcileNow = async (userId: string, actor: string) =>
    (await reconcileWithReceipt(deps, userId, actor)).result;
  return { sources, actions, apiReconcileNow };
}
