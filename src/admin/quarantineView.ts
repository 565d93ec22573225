import type { QuarantineView } from "../platform/quarantine.js";

/**
 * A quarantined platform family as the overview's panel and GET /admin/api/quarantine show it
 * (`res.json` sends the dates as ISO strings).
 */
export function presentQuarantine(q: QuarantineView) {
  return {
    family: q.family,
    state: q.state,
    reason: q.reason,
    detail: q.detail,
    lastStatus: q.lastStatus,
    since: q.since,
    resumeAt: q.resumeAt,
    failedProbes: q.failedProbes,
  };
}

export type QuarantineRow = ReturnType<typeof presentQuarantine>;
