import type { Database } from "../db/database.js";
import {
  lastPushes,
  listParkedChanges,
  pendingSummary,
  type ParkedRow,
  type PushLogRow,
} from "../db/mirror/statusRepository.js";
import type { MirrorKind } from "../db/mirror/syncRepository.js";

/** The mirror sync's status, as the admin JSON API answers it (src/admin/mirror.ts shapes it for the UI). */

const MIRROR_TABLES: Record<MirrorKind, string> = {
  email: "mirror.email_subscription_states",
  subscription_group: "mirror.subscription_group_states",
  preference_center: "mirror.preference_centers",
};

export type MirrorTableStatus = {
  table: string;
  kind: MirrorKind;
  pending: number;
  inFlight: number;
  parked: number;
  oldestPendingSeconds: number | null;
  lastPush: Omit<PushLogRow, "kind"> | null;
};

export type MirrorStatus = {
  tables: MirrorTableStatus[];
  parked: (ParkedRow & { table: string })[];
  lastPush: PushLogRow | null;
};

export async function mirrorStatus(db: Database, now: Date, parkedLimit = 100): Promise<MirrorStatus> {
  const [summary, pushes, parked] = await Promise.all([
    pendingSummary(db, now),
    lastPushes(db),
    listParkedChanges(db, { limit: parkedLimit }),
  ]);
  const byKind = new Map(pushes.map((p) => [p.kind, p]));
  const tables = summary.map((s): MirrorTableStatus => {
    const push = byKind.get(s.kind);
    const { kind: _kind, ...lastPush } = push ?? ({} as PushLogRow);
    return { table: MIRROR_TABLES[s.kind], ...s, lastPush: push ? lastPush : null };
  });
  const lastPush = pushes.reduce<PushLogRow | null>((latest, p) => (!latest || p.id > latest.id ? p : latest), null);
  return { tables, parked: parked.map((p) => ({ ...p, table: MIRROR_TABLES[p.kind] })), lastPush };
}

/** For the overview's mirror-lag panel. */
export async function mirrorLag(
  db: Database,
  now: Date,
): Promise<{ table: string; kind: MirrorKind; pending: number; parked: number; lagSeconds: number | null }[]> {
  return (await pendingSummary(db, now)).map((s) => ({
    table: MIRROR_TABLES[s.kind],
    kind: s.kind,
    parked: s.parked,
    pending: s.pending,
    lagSeconds: s.oldestPendingSeconds,
  }));
}
