import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * The tamper-evident log (docs/access-review.md, "The tamper-evident log"). Each reconcile_log entry
 * carries `chain_hash`, the SHA-256 of the hash before it and of its own canonical bytes. One row of
 * `audit_chains` per chain holds its head (locked by every append, so replicas link entries in one
 * order) and its anchor: entries at or below `anchor_id` are outside the chain, and the first entry
 * above it follows `anchor_hash`. Entries written before this migration are not re-hashed: the chain
 * starts at a recorded genesis after the highest existing id, so the migration reads no old row.
 * Retention moves the anchor forward when it deletes the oldest entries.
 */
export class AuditChain1763700001600 implements MigrationInterface {
  name = "AuditChain1763700001600";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE reconcile_log ADD COLUMN chain_hash text`);
    // When the change an entry carries out was queued: the evidence pack's IdP-to-platform latencies.
    await q.query(`ALTER TABLE reconcile_log ADD COLUMN queued_at timestamptz`);
    await q.query(`
      CREATE TABLE audit_chains (
        name text PRIMARY KEY,
        anchor_id bigint NOT NULL,
        anchor_hash text NOT NULL,
        head_id bigint NOT NULL,
        head_hash text NOT NULL,
        genesis_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      INSERT INTO audit_chains (name, anchor_id, anchor_hash, head_id, head_hash)
      SELECT 'reconcile_log', m.id, repeat('0', 64), m.id, repeat('0', 64)
        FROM (SELECT coalesce(max(id), 0) AS id FROM reconcile_log) m`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE audit_chains`);
    await q.query(`ALTER TABLE reconcile_log DROP COLUMN chain_hash, DROP COLUMN queued_at`);
  }
}
