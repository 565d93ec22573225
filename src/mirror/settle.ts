import type { Clock } from "../clock.js";
import type { Database } from "../db/database.js";
import { settleClaimedChanges, type MirrorKind, type Settlement } from "../db/mirror/syncRepository.js";
import { changesParked } from "../notify/platformEvents.js";

/**
 * Settles claimed changes by the versions pushed and queues mirror.parked in the same transaction
 * as the parks it reports (the batch pushes, their retries, and each preference-center page).
 * Returns the settlements a locked row held back (an ETL transaction writing it): the caller tries
 * them again later; none of those is reported as parked yet.
 */
export function settleAndNotify(
  deps: { db: Database; clock: Clock },
  kind: MirrorKind,
  claimId: string,
  settlements: readonly Settlement[],
): Promise<Settlement[]> {
  return deps.db.transaction(async (tx) => {
    const left = await settleClaimedChanges(tx, kind, claimId, settlements, deps.clock.now());
    await changesParked(
      tx,
      deps.clock.now(),
      kind,
      settlements.filter((s) => !left.includes(s)),
    );
    return left;
  });
}
