import type { Queryable } from "../database.js";
import type { Change } from "../../reconcile/diff.js";
import type { LogOutcome } from "../../vocabulary/reconcile.js";
import { logEntryWords } from "../reconcile/logWords.js";

/** What the evidence pack reads: the log and the campaign decisions over a window, in batches, the campaigns, and the mapping in force. */

export type EvidenceLogEntry = {
  id: string;
  at: Date;
  queuedAt: Date | null;
  userName: string | null;
  action: string;
  outcome: string;
  trigger: unknown;
  changes: Change[];
  actor: string | null;
  error: string | null;
  note: string | null;
  chainHash: string | null;
};

const BATCH = 1000;

/** The log's entries with `from <= at < to`, in id order, a batch at a time (the window can be large). */
export async function* logWindow(db: Queryable, from: Date, to: Date): AsyncGenerator<EvidenceLogEntry[]> {
  let after = "0";
  for (;;) {
    const rows = await db.query<{
      id: string;
      at: Date;
      queued_at: Date | null;
      user_name: string | null;
      action: string;
      outcome: LogOutcome;
      trigger: unknown;
      changes: Change[];
      actor: string | null;
      error: string | null;
      note: string | null;
      chain_hash: string | null;
    }>(
      `SELECT id, at, queued_at, user_name, action, outcome, trigger, changes, actor, error, note, chain_hash
         FROM reconcile_log WHERE at >= $1 AND at < $2 AND id > $3 ORDER BY id LIMIT ${BATCH}`,
      [from, to, after],
    );
    if (rows.length === 0) return;
    yield rows.map((r) => ({
      id: r.id,
      at: r.at,
      queuedAt: r.queued_at,
      userName: r.user_name,
      action: r.action,
      outcome: r.outcome,
      trigger: r.trigger,
      changes: r.changes,
      actor: r.actor,
      ...logEntryWords(r),
      chainHash: r.chain_hash,
    }));
    after = rows[rows.length - 1]!.id;
    if (rows.length < BATCH) return;
  }
}

export type EvidenceCampaign = {
  id: string;
  name: string;
  scope: unknown;
  reviewers: { name?: string; role?: string; workspace?: string }[];
  fallbackReviewer: string;
  startedBy: string;
  startedAt: Date;
  dueAt: Date;
  closedAt: Date | null;
  closedBy: string | null;
  undecidedAction: string | null;
  items: number;
  kept: number;
  revoked: number;
};

/**
 * The campaigns open at some time in the window, with their counts as of its end (from the
 * decisions' record, so a decision after the window does not count).
 */
export async function campaignsInWindow(db: Queryable, from: Date, to: Date): Promise<EvidenceCampaign[]> {
  const rows = await db.query<{
    id: string;
    name: string;
    scope: unknown;
    reviewers: EvidenceCampaign["reviewers"];
    fallback_reviewer: string;
    started_by: string;
    started_at: Date;
    due_at: Date;
    closed_at: Date | null;
    closed_by: string | null;
    undecided_action: string | null;
    items: number;
    kept: number;
    revoked: number;
  }>(
    `SELECT c.*, c.close_summary->>'undecidedAction' AS undecided_action,
            (SELECT count(*)::int FROM campaign_items i WHERE i.campaign_id = c.id) AS items,
            coalesce(d.kept, 0) AS kept, coalesce(d.revoked, 0) AS revoked
       FROM campaigns c
       LEFT JOIN LATERAL (
         SELECT count(*) FILTER (WHERE decision = 'keep')::int AS kept,
                count(*) FILTER (WHERE decision = 'revoke')::int AS revoked
           FROM campaign_decisions WHERE campaign_id = c.id AND decided_at < $2) d ON true
      WHERE c.started_at < $2 AND (c.closed_at IS NULL OR c.closed_at >= $1)
      ORDER BY c.started_at, c.id`,
    [from, to],
  );
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    scope: r.scope,
    reviewers: r.reviewers,
    fallbackReviewer: r.fallback_reviewer,
    startedBy: r.started_by,
    startedAt: r.started_at,
    dueAt: r.due_at,
    closedAt: r.closed_at,
    closedBy: r.closed_by,
    undecidedAction: r.undecided_action,
    items: r.items,
    kept: r.kept,
    revoked: r.revoked,
  }));
}

export type EvidenceDecision = {
  id: string;
  campaignId: string;
  campaignName: string;
  itemId: string;
  userName: string;
  scope: string;
  workspace: string | null;
  team: string | null;
  permission: string;
  reviewer: string;
  decision: "keep" | "revoke" | "undecided";
  comment: string | null;
  decidedBy: string;
  decidedAt: Date;
  chainHash: string | null;
  /** For a revoke: the user's first change applied on the platform at or after the decision. */
  appliedLogId: string | null;
  appliedAt: Date | null;
};

/**
 * The campaign decisions taken in the window (`from <= decided_at < to`), in id order, a batch at
 * a time; `revokesOnly` adds, for each revoke, the log entry that applied it: the user's first
 * successful update or deprovision at or after the decision.
 */
export async function* decisionsWindow(
  db: Queryable,
  from: Date,
  to: Date,
  revokesOnly = false,
): AsyncGenerator<EvidenceDecision[]> {
  let after = "0";
  for (;;) {
    const rows = await db.query<{
      id: string;
      campaign_id: string;
      campaign_name: string;
      item_id: string;
      user_name: string;
      scope: string;
      workspace: string | null;
      team: string | null;
      permission: string;
      reviewer: string;
      decision: EvidenceDecision["decision"];
      comment: string | null;
      decided_by: string;
      decided_at: Date;
      chain_hash: string | null;
      applied_id: string | null;
      applied_at: Date | null;
    }>(
      `SELECT d.*, c.name AS campaign_name, a.id AS applied_id, a.at AS applied_at
         FROM campaign_decisions d JOIN campaigns c ON c.id = d.campaign_id
         LEFT JOIN LATERAL (
           SELECT l.id, l.at FROM reconcile_log l
            WHERE $4 AND l.user_id = d.user_id AND l.at >= d.decided_at
              AND l.action IN ('update', 'deprovision') AND l.outcome = 'succeeded'
            ORDER BY l.at, l.id LIMIT 1) a ON true
        WHERE d.decided_at >= $1 AND d.decided_at < $2 AND d.id > $3 AND (NOT $4 OR d.decision = 'revoke')
        ORDER BY d.id LIMIT ${BATCH}`,
      [from, to, after, revokesOnly],
    );
    if (rows.length === 0) return;
    yield rows.map((r) => ({
      id: String(r.id),
      campaignId: r.campaign_id,
      campaignName: r.campaign_name,
      itemId: String(r.item_id),
      userName: r.user_name,
      scope: r.scope,
      workspace: r.workspace,
      team: r.team,
      permission: r.permission,
      reviewer: r.reviewer,
      decision: r.decision,
      comment: r.comment,
      decidedBy: r.decided_by,
      decidedAt: r.decided_at,
      chainHash: r.chain_hash,
      appliedLogId: r.applied_id === null ? null : String(r.applied_id),
      appliedAt: r.applied_at,
    }));
    after = String(rows[rows.length - 1]!.id);
    if (rows.length < BATCH) return;
  }
}
