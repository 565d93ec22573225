import type { Clock } from "../clock.js";
import type { Database } from "../db/database.js";
import {
  listParkedChanges,
  listPushLog,
  requeueParkedChanges,
  type ParkedRow,
  type PushLogRow,
} from "../db/mirror/statusRepository.js";
import type { MirrorKind } from "../db/mirror/syncRepository.js";
import { log } from "../logging/logger.js";
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

/** GET /admin/api/mirror/log: the mirror-sync log, newest first, and the cursor of the next page. */
async function mirrorPushLog(
  db: Database,
  q: { kind?: MirrorKind; cursor?: string; limit: number },
): Promise<{ entries: PushLogRow[]; nextCursor: string | null }> {
  const entries = await listPushLog(db, {
    kind: q.kind,
    beforeId: q.cursor ? Number(q.cursor) : undefined,
    limit: q.limit,
  });
  return { entries, nextCursor: entries.length === q.limit ? String(entries[entries.length - 1]!.id) : null };
}

/** GET /admin/api/mirror/parked: parked changes with their reasons. */
function mirrorParked(db: Database, q: { kind?: MirrorKind; limit: number }): Promise<ParkedRow[]> {
  return listParkedChanges(db, q);
}

/** Puts parked changes back in line (all, one kind, or listed keys); the requeue is logged with the actor. */
async function requeueParked(
  db: Database,
  which: { kind?: MirrorKind; keys?: string[] },
  actor: string,
): Promise<number> {
  const requeued = await requeueParkedChanges(db, which);
  log.info("mirror", "parked changes requeued", { kind: which.kind, keys: which.keys?.length, requeued, actor });
  return requeued;
}

/**
 * The mirror sync's admin side as the JSON API calls it, built once (src/service/http.ts): the
 * status, the push log, the parked changes and their requeue, which wakes this process's worker.
 */
export type MirrorAdmin = {
  status(): ReturnType<typeof mirrorStatus>;
  pushLog(q: { kind?: MirrorKind; cursor?: string; limit: number }): ReturnType<typeof mirrorPushLog>;
  parked(q: { kind?: MirrorKind; limit: number }): Promise<ParkedRow[]>;
  requeue(which: { kind?: MirrorKind; keys?: string[] }, actor: string): Promise<number>;
};

export function createMirrorAdmin(deps: { db: Database; clock: Clock; onRequeue?: () => void }): MirrorAdmin {
  const { db, clock } = deps;
  return {
    status: () => mirrorStatus(db, clock.now()),
    pushLog: (q) => mirrorPushLog(db, q),
    parked: (q) => mirrorParked(db, q),
    async requeue(which, actor) {
      const requeued = await requeueParked(db, which, actor);
      deps.onRequeue?.();
      return requeued;
    },
  };
}
