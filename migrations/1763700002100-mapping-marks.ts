import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * The marks of a mapping change survive a stop: a replica records the new mapping in force, then
 * marks the users it affects; one that stopped in between (a SIGKILL, the database gone mid-way)
 * left the change in force with its users unmarked, and no later start noticed. `marked_hash` is
 * the mapping whose marks were all written and `previous_source_text` the one it replaced, so the
 * next replica to start or reload finishes them (MappingStore.putInForce).
 *
 * Expand only: both columns are nullable, and the mapping in force now counts as marked. A replica
 * of the release before swaps the mapping without touching them and marks its users itself; a new
 * replica then sees the swap unmarked and marks again from the text before, which costs planning
 * and no platform call (a user whose plan is empty makes none).
 */
export class MappingMarks1763700002100 implements MigrationInterface {
  name = "MappingMarks1763700002100";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE mapping_state ADD COLUMN previous_source_text text, ADD COLUMN marked_hash text`);
    await q.query(`UPDATE mapping_state SET marked_hash = hash`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE mapping_state DROP COLUMN previous_source_text, DROP COLUMN marked_hash`);
  }
}
