import { mirrorPageData } from "./mirror.js";
import type { AdminActions, AdminDataSources } from "../http/admin/sources.js";
import { approvalsData, decideHolds } from "./approvals.js";
import type { AdminDataDeps } from "./deps.js";
import { logEntry, logExport, logPage } from "./log.js";
import { AppError } from "../errors.js";
import { APPLY_BY_FILE, mappingData, previewMapping } from "./mapping.js";
import { overviewData, resumeFamily } from "./overview.js";
import { reconcileUserNow, reconcileWithReceipt } from "./reconcileNow.js";
import { runsData, startResyncNow } from "./runs.js";
import { userDetail, usersPage } from "./users.js";
import { NotFoundError } from "../errors.js";
import type { Notifications } from "../notify/index.js";
import type { AdminActor } from "../http/admin/actor.js";


export type { AdminDataDeps } from "./deps.js";

/**
 * The admin UI's data sources and actions, from the repositories, the reconciler and the
 * resync job (when `resync` is given). Applying a mapping is done by editing MAPPING_FILE (see
 * APPLY_BY_FILE): `applyMapping` refuses with that explanation rather than write the file.
 */
export function createAdminData(deps: AdminDataDeps): {
  sources: AdminDataSources;
  actions: AdminActions;
  /** Reconcile now for the JSON API (POST /admin/api/users/:id/reconcile): the same receipt in the log; answers the result. */
  apiReconcileNow?: (userId: string, actor: string) => Promise<unknown>;
} {
  const { reconcileNow, resync } = deps;
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
    ...(deps.notifications ? { notifications: deps.notifications.status } : {}),
    ...(resync ? { runs: () => runsData(deps, resync) } : {}),
  };
  const actions: AdminActions = {
    approve: (ids, actor) => decideHolds(deps, ids, "approved", actor),
    reject: (ids, actor) => decideHolds(deps, ids, "rejected", actor),
    applyMapping: async () => {
      throw new AppError(APPLY_BY_FILE, 409);
    },
    ...(reconcileNow ? { reconcileNow: (userId, actor) => reconcileUserNow({ ...deps, reconcileNow }, userId, actor) } : {}),
    ...(resync ? { startResync: (actor) => startResyncNow(resync, actor) } : {}),
    ...(deps.quarantine ? { resumeFamily: (family, actor) => resumeFamily(deps.quarantine!, family, actor) } : {}),
    ...(deps.notifications ? { sendTestNotification: (channel, actor) => sendTestNotification(deps.notifications!, channel, actor) } : {}),
  };
  const apiReconcileNow = reconcileNow && (async (userId: string, actor: string) => (await reconcileWithReceipt({ ...deps, reconcileNow }, userId, actor)).result);
  return { sources, actions, ...(apiReconcileNow ? { apiReconcileNow } : {}) };
}

async function sendTestNotification(notifications: Pick<Notifications, "sendTest">, channel: string, actor: AdminActor): Promise<string> {
  if (!(await notifications.sendTest(channel, actor.name))) throw new NotFoundError(`No ${channel} channel is configured`);
  return `Test notification queued for ${channel}; the outbox below shows its delivery.`;
}
