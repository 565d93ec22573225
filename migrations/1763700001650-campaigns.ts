import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * Access certification campaigns (docs/access-review.md, "Campaigns"): a campaign freezes its
 * items (user × grant) at start; a "revoke" decision opens a deny that the desired state honours
 * until the IdP stops granting it or an admin lifts it.
 */
export class Campaigns1763700001650 implements MigrationInterface {
  name = "Campaigns1763700001650";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE campaigns (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name text NOT NULL,
        -- { kind: everything | company-admins | workspace | permission | groups, ... }
        scope jsonb NOT NULL,
        -- [{ name?, role?, workspace? }]: who reviews which items, first match wins
        reviewers jsonb NOT NULL,
        fallback_reviewer text NOT NULL,
        due_at timestamptz NOT NULL,
        started_by text NOT NULL,
        started_at timestamptz NOT NULL,
        reminded_at timestamptz,
        closed_at timestamptz,
        closed_by text,
        -- { kept, revoked, undecided, undecidedAction }
        close_summary jsonb
      )`);
    await q.query(`
      CREATE TABLE campaign_items (
        id bigserial PRIMARY KEY,
        campaign_id uuid NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
        user_id uuid NOT NULL,
        user_name text NOT NULL,
        scope text NOT NULL,
        workspace text,
        team text,
        permission text NOT NULL,
        -- the rules and IdP groups that gave the grant when it was last applied (reconcile_log.reasons)
        reasons jsonb,
        applied_at timestamptz,
        applied_by_log_id bigint,
        verified_at timestamptz,
        -- 'name:<SAML NameID>' or 'role:<admin role>'
        reviewer text NOT NULL,
        decision text CHECK (decision IN ('keep', 'revoke')),
        comment text,
        decided_by text,
        decided_at timestamptz
      )`);
    await q.query(`CREATE INDEX campaign_items_review ON campaign_items (campaign_id, reviewer, user_name, id)`);
    await q.query(`CREATE INDEX campaign_items_user ON campaign_items (campaign_id, user_name, id)`);
    await q.query(`
      CREATE TABLE access_denies (
        id bigserial PRIMARY KEY,
        user_id uuid NOT NULL,
        user_name text NOT NULL,
        scope text NOT NULL,
        workspace text,
        team text,
        permission text NOT NULL,
        campaign_id uuid REFERENCES campaigns (id) ON DELETE SET NULL,
        campaign_name text NOT NULL,
        item_id bigint,
        decided_by text NOT NULL,
        decided_at timestamptz NOT NULL,
        comment text NOT NULL,
        ended_at timestamptz,
        -- 'idp-no-longer-grants' or 'lifted'
        end_reason text,
        ended_by text
      )`);
    await q.query(
      `CREATE UNIQUE INDEX access_denies_active ON access_denies (user_id, scope, coalesce(workspace, ''), coalesce(team, ''), permission) WHERE ended_at IS NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE access_denies`);
    await q.query(`DROP TABLE campaign_items`);
    await q.query(`DROP TABLE campaigns`);
  }
}
