import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * Reviews stay readable under the platform's granular model (docs/access-review.md): what one rule
 * gives a granular user in one workspace (or team), 45 strings for one legacy `basic_access` and
 * `send_campaigns_canvases`, is one campaign item, not 45.
 * - `campaign_items.bundle`, `campaign_decisions.bundle`: the strings of such an item (a JSON array,
 *   as the log entry that applied the state stored them: copied, not rebuilt, at a campaign's start);
 *   its `permission` then names the rule ("rule 'EU marketers'"). Null: one string, role or set.
 * - `access_denies.part_of`: a revoked bundle opens one deny per string (each ends on its own); this
 *   names the bundle it was revoked with, so the denies read, and are lifted, as one.
 * The scope column takes a new value, `role`, with no constraint to widen. Nullable columns leave
 * the decisions' chain as it was (null columns are not hashed: src/db/auditChain.ts).
 */
export class ReviewableGrants1763700001850 implements MigrationInterface {
  name = "ReviewableGrants1763700001850";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE campaign_items ADD COLUMN bundle jsonb`);
    await q.query(`ALTER TABLE campaign_decisions ADD COLUMN bundle jsonb`);
    await q.query(`ALTER TABLE access_denies ADD COLUMN part_of text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE access_denies DROP COLUMN part_of`);
    await q.query(`ALTER TABLE campaign_decisions DROP COLUMN bundle`);
    await q.query(`ALTER TABLE campaign_items DROP COLUMN bundle`);
  }
}
