import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * The platform's own record (docs/platform-record.md): the Security Event report's rows, read from
 * a file, an upload or the daily S3 export, each kept once however often it is imported.
 *
 * - `platform_events`: one row per event; `fingerprint` (sha256 of the normalised row) makes a
 *   re-import or an overlapping report count each event once. `handled_at` is set when the
 *   connector has decided what the event means (its own write, an account made by hand, …), and
 *   `own_debit_id` names the write of its own that the event was.
 * - `platform_event_imports`: one row per import, with what it read, kept and skipped.
 * - `platform_export_objects`: each S3 object of the daily export read once (by key and ETag).
 */
export class PlatformRecord1763700002200 implements MigrationInterface {
  name = "PlatformRecord1763700002200";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE platform_event_imports (
        id bigserial PRIMARY KEY,
        at timestamptz NOT NULL,
        source text NOT NULL,
        actor text,
        rows integer NOT NULL,
        imported integer NOT NULL,
        duplicates integer NOT NULL,
        skipped jsonb NOT NULL DEFAULT '[]'
      )`);
    await q.query(`
      CREATE TABLE platform_events (
        id bigserial PRIMARY KEY,
        fingerprint text NOT NULL UNIQUE,
        at timestamptz NOT NULL,
        actor text NOT NULL,
        event text NOT NULL,
        kind text NOT NULL,
        account text,
        ip text,
        details text,
        import_id bigint REFERENCES platform_event_imports (id) ON DELETE SET NULL,
        imported_at timestamptz NOT NULL,
        handled_at timestamptz,
        outcome text,
        -- the connector's own write this event was (a budget_debits row), so one write explains one event
        own_debit_id bigint
      )`);
    await q.query(`CREATE INDEX platform_events_unhandled ON platform_events (at, id) WHERE handled_at IS NULL`);
    await q.query(
      `CREATE INDEX platform_events_account ON platform_events (account, at DESC) WHERE account IS NOT NULL`,
    );
    await q.query(`CREATE INDEX platform_events_at ON platform_events (at)`);
    await q.query(
      `CREATE INDEX platform_events_own_debit ON platform_events (own_debit_id) WHERE own_debit_id IS NOT NULL`,
    );
    await q.query(`
      CREATE TABLE platform_export_objects (
        key text PRIMARY KEY,
        etag text NOT NULL,
        read_at timestamptz NOT NULL,
        import_id bigint REFERENCES platform_event_imports (id) ON DELETE SET NULL
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE platform_export_objects`);
    await q.query(`DROP TABLE platform_events`);
    await q.query(`DROP TABLE platform_event_imports`);
  }
}
