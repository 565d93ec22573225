import type { AdminDataDeps } from "./deps.js";
import { decideAllHolds, decideHold, listHeld } from "./approvals.js";
import { logEntries, logEntryView, type LogQuery } from "./log.js";
import { permissionModelView } from "./overview.js";
import { budgetView, queueView } from "./queue.js";

/**
 * The admin JSON API's reads and decisions that are not a capability of their own (the log, the
 * budget, the queue, the held actions, the permission model), over the same src/admin functions the
 * pages use: one object built once (src/service/http.ts), so src/http holds no database handle.
 */
export type AdminApiOperations = {
  log(q: LogQuery): ReturnType<typeof logEntries>;
  logEntry(id: string): ReturnType<typeof logEntryView>;
  /** The permission model in force and the grants it holds for a legacy state. */
  permissions(): ReturnType<typeof permissionModelView>;
  budget(): ReturnType<typeof budgetView>;
  queue(): ReturnType<typeof queueView>;
  holds(pendingOnly: boolean): ReturnType<typeof listHeld>;
  decideHold(userId: string, decision: "approved" | "rejected", actor: string): ReturnType<typeof decideHold>;
  decideAllHolds(decision: "approved" | "rejected", actor: string): ReturnType<typeof decideAllHolds>;
};

export function createAdminApiOperations(
  deps: Pick<AdminDataDeps, "db" | "clock" | "budget" | "desired">,
): AdminApiOperations {
  const { db } = deps;
  return {
    log: (q) => logEntries(deps, q),
    logEntry: (id) => logEntryView(deps, id),
    permissions: async () => permissionModelView(db, (await deps.desired.shown(db)).mapping),
    budget: () => budgetView(deps),
    queue: () => queueView(deps),
    holds: (pendingOnly) => listHeld(deps, pendingOnly),
    decideHold: (userId, decision, actor) => decideHold(deps, userId, decision, actor),
    decideAllHolds: (decision, actor) => decideAllHolds(deps, decision, actor),
  };
}
