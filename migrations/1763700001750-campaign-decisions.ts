import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * Campaign decisions as an append-only, hash-chained table (docs/access-review.md, "The
 * tamper-evident log"): each keep, revoke, or item left undecided at a campaign's close is one row
 * of `campaign_decisions`, chained in `audit_chains` ('campaign_decisions') as the log is. The item
 * keeps its current state (campaign_items.decision) for the pages; this table is the record.
 * Decisions taken before this migration are copied in, in the order they were taken, and predate
 * the chain: its genesis anchor is after them, as the log's is after its older entries.
 */
export class CampaignDecisions1763700001750 implements MigrationInterface {
  name = "CampaignDecisions1763700001750";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE campaign_decisions (
        id bigserial PRIMARY KEY,
        campaign_id uuid NOT NULL REFERENCES campaigns (id),
        item_id bigint NOT NULL,
        user_id uuid NOT NULL,
        user_name text NOT NULL,
        scope text NOT NULL,
        workspace text,
        team text,
        permission text NOT NULL,
        -- the item's assigned reviewer ('name:…' or 'role:…')
        reviewer text NOT NULL,
        -- 'undecided': nobody decided before the close, and the item was kept (CAMPAIGN_UNDECIDED_AT_CLOSE=keep)
        decision text NOT NULL CHECK (decision IN ('keep', 'revoke', 'undecided')),
        comment text,
        decided_by text NOT NULL,
        decided_at timestamptz NOT NULL,
        chain_hash text
      )`);
    await q.query(`CREATE INDEX campaign_decisions_at ON campaign_decisions (decided_at, id)`);
    await q.query(`CREATE INDEX campaign_decisions_campaign ON campaign_decisions (campaign_id, id)`);
    await q.query(`
      INSERT INTO campaign_decisions (campaign_id, item_id, user_id, user_name, scope, workspace, team, permission, reviewer, decision, comment, decided_by, decided_at)
      SELECT campaign_id, id, user_id, user_name, scope, workspace, team, permission, reviewer, decision, comment, decided_by, decided_at
        FROM campaign_items WHERE decision IS NOT NULL ORDER BY decided_at, id`);
    await q.query(`
      INSERT INTO audit_chains (name, anchor_id, anchor_hash, head_id, head_hash)
      SELECT 'campaign_decisions', m.id, repeat('0', 64), m.id, repeat('0', 64)
        FROM (SELECT coalesce(max(id), 0) AS id FROM campaign_decisions) m`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM audit_chains WHERE name = 'campaign_decisions'`);
    await q.query(`DROP TABLE campaign_decisions`);
  }
}
