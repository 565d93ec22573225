import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * A campaign's start and its counts at 500,000 items (issue 35; docs/performance.md, "Campaigns").
 * - `campaign_items` becomes a table partitioned by campaign, one partition a campaign: a start
 *   writes its items into a table of their own, builds that table's indexes from its rows (a sort
 *   each, not one descent of a tree per item), checks its foreign key to `campaigns` with one join
 *   (not one look-up per item) and attaches it (src/db/campaigns/itemsPartition.ts). The foreign key
 *   is the parent's, so every partition has it. The indexes leave out campaign_id, which is constant
 *   within a partition; the primary key is (id, campaign_id), a partitioned table's unique key
 *   holding its partition key (ids still come from the one sequence).
 * - `campaign_counts`: each campaign's items, kept and revoked per reviewer, written at the start
 *   and kept by a trigger on every UPDATE of the items, in the same transaction: the Campaigns list
 *   and a campaign's counts read a few rows instead of every item.
 * Existing items are copied into their campaign's partition, ids unchanged.
 * The release before still runs on this schema (docs/operations.md, "Upgrades"): its start inserts
 * into campaign_items itself, so its items go to the default partition (each row indexed and
 * checked as before), and a trigger on inserts through campaign_items counts them.
 */
export class CampaignPartitions1763700001920 implements MigrationInterface {
  name = "CampaignPartitions1763700001920";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE campaign_items RENAME TO campaign_items_unpartitioned`);
    await q.query(`ALTER INDEX campaign_items_review RENAME TO campaign_items_unpartitioned_review`);
    await q.query(`ALTER INDEX campaign_items_user RENAME TO campaign_items_unpartitioned_user`);
    await q.query(`ALTER INDEX campaign_items_pkey RENAME TO campaign_items_unpartitioned_pkey`);
    await q.query(`
      CREATE TABLE campaign_items (
        id bigint NOT NULL DEFAULT nextval('campaign_items_id_seq'),
        campaign_id uuid NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
        user_id uuid NOT NULL,
        user_name text NOT NULL,
        scope text NOT NULL,
        workspace text,
        team text,
        permission text NOT NULL,
        reasons jsonb,
        applied_at timestamptz,
        applied_by_log_id bigint,
        verified_at timestamptz,
        reviewer text NOT NULL,
        decision text CHECK (decision IN ('keep', 'revoke')),
        comment text,
        decided_by text,
        decided_at timestamptz,
        bundle jsonb,
        PRIMARY KEY (id, campaign_id)
      ) PARTITION BY LIST (campaign_id)`);
    await q.query(`ALTER SEQUENCE campaign_items_id_seq OWNED BY campaign_items.id`);
    await q.query(`CREATE INDEX campaign_items_review ON campaign_items (reviewer, user_name, id)`);
    await q.query(`CREATE INDEX campaign_items_user ON campaign_items (user_name, id)`);
    await q.query(`
      DO $$
      DECLARE c uuid;
      BEGIN
        FOR c IN SELECT id FROM campaigns LOOP
          EXECUTE format('CREATE TABLE %I PARTITION OF campaign_items FOR VALUES IN (%L)',
                         'campaign_items_' || replace(c::text, '-', ''), c);
        END LOOP;
      END $$`);
    await q.query(`
      INSERT INTO campaign_items (id, campaign_id, user_id, user_name, scope, workspace, team, permission, reasons, applied_at,
                                  applied_by_log_id, verified_at, reviewer, decision, comment, decided_by, decided_at, bundle)
      SELECT id, campaign_id, user_id, user_name, scope, workspace, team, permission, reasons, applied_at,
             applied_by_log_id, verified_at, reviewer, decision, comment, decided_by, decided_at, bundle
        FROM campaign_items_unpartitioned ORDER BY campaign_id, user_name, id`);
    await q.query(`DROP TABLE campaign_items_unpartitioned`);
    await q.query(`CREATE TABLE campaign_items_default PARTITION OF campaign_items DEFAULT`);

    await q.query(`
      CREATE TABLE campaign_counts (
        campaign_id uuid NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
        -- as campaign_items.reviewer
        reviewer text NOT NULL,
        items integer NOT NULL,
        kept integer NOT NULL,
        revoked integer NOT NULL,
        PRIMARY KEY (campaign_id, reviewer)
      )`);
    await q.query(`
      INSERT INTO campaign_counts (campaign_id, reviewer, items, kept, revoked)
      SELECT campaign_id, reviewer, count(*), count(*) FILTER (WHERE decision = 'keep'), count(*) FILTER (WHERE decision = 'revoke')
        FROM campaign_items GROUP BY campaign_id, reviewer`);
    // Every UPDATE of items (a decision, a close that revokes, a hand-made fix) moves the counts
    // in its own transaction: the rows before and after, summed per (campaign, reviewer). The
    // counts' rows are locked in one order, so two statements never wait on each other crosswise.
    await q.query(`
      CREATE FUNCTION campaign_counts_after_update() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO campaign_counts AS k (campaign_id, reviewer, items, kept, revoked)
        SELECT d.campaign_id, d.reviewer, sum(d.items), sum(d.kept), sum(d.revoked)
          FROM (SELECT campaign_id, reviewer, -1 AS items, -(decision IS NOT DISTINCT FROM 'keep')::int AS kept,
                       -(decision IS NOT DISTINCT FROM 'revoke')::int AS revoked FROM before_update
                UNION ALL
                SELECT campaign_id, reviewer, 1, (decision IS NOT DISTINCT FROM 'keep')::int,
                       (decision IS NOT DISTINCT FROM 'revoke')::int FROM after_update) d
         GROUP BY d.campaign_id, d.reviewer
        HAVING sum(d.items) <> 0 OR sum(d.kept) <> 0 OR sum(d.revoked) <> 0
         ORDER BY d.campaign_id, d.reviewer
        ON CONFLICT (campaign_id, reviewer) DO UPDATE
          SET items = k.items + excluded.items, kept = k.kept + excluded.kept, revoked = k.revoked + excluded.revoked;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER campaign_counts_after_update AFTER UPDATE ON campaign_items
        REFERENCING OLD TABLE AS before_update NEW TABLE AS after_update
        FOR EACH STATEMENT EXECUTE FUNCTION campaign_counts_after_update()`);
    // Items inserted through campaign_items (the release before's start; a start of this release
    // writes its partition before attaching it, and counts it itself).
    await q.query(`
      CREATE FUNCTION campaign_counts_after_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO campaign_counts AS k (campaign_id, reviewer, items, kept, revoked)
        SELECT campaign_id, reviewer, count(*), count(*) FILTER (WHERE decision = 'keep'), count(*) FILTER (WHERE decision = 'revoke')
          FROM inserted GROUP BY campaign_id, reviewer ORDER BY campaign_id, reviewer
        ON CONFLICT (campaign_id, reviewer) DO UPDATE
          SET items = k.items + excluded.items, kept = k.kept + excluded.kept, revoked = k.revoked + excluded.revoked;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER campaign_counts_after_insert AFTER INSERT ON campaign_items
        REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION campaign_counts_after_insert()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE campaign_counts`);
    await q.query(`DROP FUNCTION campaign_counts_after_update() CASCADE`);
    await q.query(`DROP FUNCTION campaign_counts_after_insert() CASCADE`);
    await q.query(`ALTER TABLE campaign_items RENAME TO campaign_items_partitioned`);
    await q.query(`ALTER INDEX campaign_items_review RENAME TO campaign_items_partitioned_review`);
    await q.query(`ALTER INDEX campaign_items_user RENAME TO campaign_items_partitioned_user`);
    await q.query(`ALTER INDEX campaign_items_pkey RENAME TO campaign_items_partitioned_pkey`);
    await q.query(`
      CREATE TABLE campaign_items (
        id bigint PRIMARY KEY DEFAULT nextval('campaign_items_id_seq'),
        campaign_id uuid NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
        user_id uuid NOT NULL,
        user_name text NOT NULL,
        scope text NOT NULL,
        workspace text,
        team text,
        permission text NOT NULL,
        reasons jsonb,
        applied_at timestamptz,
        applied_by_log_id bigint,
        verified_at timestamptz,
        reviewer text NOT NULL,
        decision text CHECK (decision IN ('keep', 'revoke')),
        comment text,
        decided_by text,
        decided_at timestamptz,
        bundle jsonb
      )`);
    await q.query(`ALTER SEQUENCE campaign_items_id_seq OWNED BY campaign_items.id`);
    await q.query(`INSERT INTO campaign_items SELECT * FROM campaign_items_partitioned ORDER BY id`);
    await q.query(`DROP TABLE campaign_items_partitioned`);
    await q.query(`CREATE INDEX campaign_items_review ON campaign_items (campaign_id, reviewer, user_name, id)`);
    await q.query(`CREATE INDEX campaign_items_user ON campaign_items (campaign_id, user_name, id)`);
  }
}
