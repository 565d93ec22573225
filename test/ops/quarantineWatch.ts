import { vi } from "vitest";
import type { Database } from "../../src/db/database.js";
import type { Admission, PlatformQuarantine } from "../../src/platform/quarantine.js";

/**
 * "Paused", read from the connector itself instead of from the absence of calls in a time window:
 * the answers its workers get from the quarantine gate (the real gate, called through and
 * recorded), the quarantine metric and its queues.
 */

/** Records the gate's answers for `family` from now on; `restore` puts the plain method back. */
export function watchAdmissions(
  quarantine: PlatformQuarantine,
  family: string,
): { answers: Admission[]; restore(): void } {
  const answers: Admission[] = [];
  const admit = quarantine.admit.bind(quarantine);
  const spy = vi.spyOn(quarantine, "admit").mockImplementation(async (asked) => {
    const answer = await admit(asked);
    if (asked === family) answers.push(answer);
    return answer;
  });
  return { answers, restore: () => spy.mockRestore() };
}

/** Waits until the workers have asked the gate `count` more times for the watched family. */
export async function waitForAdmissions(watch: { answers: Admission[] }, count: number): Promise<void> {
  const from = watch.answers.length;
  await vi.waitFor(
    () => {
      if (watch.answers.length < from + count)
        throw new Error(`${watch.answers.length - from} of ${count} admissions asked`);
    },
    { timeout: 30_000, interval: 50 },
  );
}

export const quarantineMetric = (family: string) => `scim_connector_platform_quarantined{family="${family}"} 1`;

/** Rows claimed right now: reconciles (claimed_by) or mirror changes (a live claim_id). */
export async function claimedWork(db: Database): Promise<{ reconciles: number; mirror: number }> {
  const [row] = (await db.query(
    `SELECT (SELECT count(*)::int FROM reconcile_queue WHERE claimed_by IS NOT NULL) AS reconciles,
            (SELECT count(*)::int FROM mirror_sync.pending WHERE claim_id IS NOT NULL AND claimed_until > now()) AS mirror`,
  )) as { reconciles: number; mirror: number }[];
  return row!;
}
