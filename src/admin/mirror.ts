import type { Database } from "../db/database.js";
import { mirrorStatus, type MirrorTableStatus } from "../mirror/status.js";

export type MirrorData = {
  tables: { name: string; pending: number; lagSeconds: number | null; lastPushAt: Date | null; state: string }[];
  parked: { table: string; key: string; error: string; parkedAt: Date }[];
};

/** For the admin UI's Mirror page (`AdminDataSources.mirror`): the mirror sync's status in the page's words. */
export async function mirrorPageData(db: Database, now: Date): Promise<MirrorData> {
  const status = await mirrorStatus(db, now);
  return {
    tables: status.tables.map((t) => ({
      name: t.table,
      pending: t.pending,
      lagSeconds: t.oldestPendingSeconds,
      lastPushAt: t.lastPush ? new Date(t.lastPush.at) : null,
      state: tableState(t),
    })),
    parked: status.parked.map((p) => ({ table: p.table, key: p.key, error: p.reason, parkedAt: new Date(p.parkedAt) })),
  };
}

/** "ok", or what needs a look: parked rows, a last request that failed, or a backlog older than five minutes. */
function tableState(t: Pick<MirrorTableStatus, "parked" | "oldestPendingSeconds" | "lastPush">): string {
  if (t.lastPush && t.lastPush.outcome !== "ok" && t.lastPush.outcome !== "rejected")
    return `failing (${t.lastPush.outcome})`;
  if ((t.oldestPendingSeconds ?? 0) > 300) return "lagging";
  if (t.parked > 0) return "parked rows";
  return "ok";
}
