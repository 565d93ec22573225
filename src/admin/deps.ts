import type { Database } from "../db/database.js";
import type { Clock } from "../clock.js";
import type { DesiredAccess } from "../mapping/desiredAccess.js";
import type { Notifications } from "../notify/index.js";
import type { PlatformQuarantine } from "../platform/quarantine.js";
import type { BudgetPolicy } from "../reconcile/budget/budget.js";
import type { ReconcileResult } from "../reconcile/outcomes.js";
import type { Resyncs } from "./runs/resyncs.js";

/** What the admin UI's data sources and actions read and call. service/http.ts supplies it (createAdminData). */
export type AdminDataDeps = {
  db: Database;
  clock: Clock;
  budget: BudgetPolicy;
  /** The mapping in force, shared by every replica (the reconciler's), and each user's desired access under it. */
  desired: DesiredAccess;
  /** MAPPING_FILE, shown on the mapping page. */
  mappingFile: string;
  /** The reconcile worker's provision on demand; absent when no platform is configured (reconcile now then answers 503). */
  reconcileNow?: (userId: string, actor: string) => Promise<ReconcileResult | "busy">;
  /** Full resyncs (the Runs page, the overview's last runs, the resync button). */
  resync: Resyncs;
  /** The platform quarantine (overview panel, resume button). */
  quarantine: Pick<PlatformQuarantine, "list" | "resume">;
  /** The notification channels and outbox (Notifications page, test button). */
  notifications: Pick<Notifications, "status" | "sendTest">;
};
