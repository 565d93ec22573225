import type { Settlement } from "../db/mirror/syncRepository.js";

/** What one sync cycle did, summed over kinds (the loop, tests and benchmarks read it). */
export type CycleReport = {
  claimed: number;
  pushed: number;
  parked: number;
  released: number;
  requests: number;
  /** Changes held back to fill their arrays (the linger): the loop pauses briefly rather than re-claim them at once. */
  lingering: number;
};

export function countSettlements(
  settlements: readonly Settlement[],
): Pick<CycleReport, "pushed" | "parked" | "released"> {
  let pushed = 0;
  let parked = 0;
  let released = 0;
  for (const s of settlements) {
    if (s.outcome === "ack") pushed++;
    else if (s.outcome === "park") parked++;
    else released++;
  }
  return { pushed, parked, released };
}

export function emptyReport(): CycleReport {
  return { claimed: 0, pushed: 0, parked: 0, released: 0, requests: 0, lingering: 0 };
}

export function addReports(a: CycleReport, b: CycleReport): CycleReport {
  return {
    claimed: a.claimed + b.claimed,
    pushed: a.pushed + b.pushed,
    parked: a.parked + b.parked,
    released: a.released + b.released,
    requests: a.requests + b.requests,
    lingering: a.lingering + b.lingering,
  };
}
