import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * The log's words in two fields: `error` says why an entry that failed (or will be retried) did not
 * happen; the new `note` carries every other entry's words ("access removed: …", "held: …", "revoked
 * in campaign …"), which were kept in `error` until now.
 *
 * Entries already written are not moved: each is hashed into the tamper-evident chain with its
 * columns as they are (src/db/auditChain.ts), so moving a text would break its hash. The null `note`
 * leaves their canonical bytes unchanged, and the log repository reads an older entry's `error` as
 * its note when the entry did not fail (`logEntryWords`).
 */
export class LogNote1763700002000 implements MigrationInterface {
  name = "LogNote1763700002000";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE reconcile_log ADD COLUMN note text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE reconcile_log DROP COLUMN note`);
  }
}
