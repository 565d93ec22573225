import type { Database } from "../db/database.js";
import { decideHold, listHolds, type Hold } from "../db/reconcile/holdRepository.js";
import { markUsersDirty } from "../db/reconcile/queueRepository.js";
import { writeLogEntry } from "../db/reconcile/logRepository.js";
import { holdSettled } from "../notify/reconcileEvents.js";

/**
 * Admin decisions on held actions. Approving re-queues the user, whose next reconcile carries
 * the held action out; rejecting leaves the platform as it is. Both are logged with who decided.
 */
export async function decide(
  db: Database,
  userId: string,
  decision: "approved" | "rejected",
  actor: string,
  now: Date,
): Promise<Hold | undefined> {
  return db.transaction(async (tx) => {
    const hold = await decideHold(tx, userId, decision, actor, now);
    if (!hold) return undefined;
    await writeLogEntry(tx, {
      at: now,
      userId,
      userName: hold.userName,
      action: decision === "approved" ? "approve" : "reject",
      outcome: decision === "approved" ? "succeeded" : "rejected",
      trigger: { kind: "admin", actor, hold: hold.kind },
      actor,
    });
    if (decision === "approved") await markUsersDirty(tx, [userId], { kind: "admin", actor, via: "approval" });
    await holdSettled(tx, now, { decision, by: actor });
    return hold;
  });
}

export async function decideAll(
  db: Database,
  decision: "approved" | "rejected",
  actor: string,
  now: Date,
): Promise<number> {
  let count = 0;
  for (const hold of await listHolds(db, { pendingOnly: true })) {
    if (await decide(db, hold.userId, decision, actor, now)) count++;
  }
  return count;
}
