import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * Notifications (src/notify/): the transactional outbox.
 *
 * - `notification_incidents`: one row per incident (a quarantined family, a wave of held actions,
 *   a silent IdP). At most one open incident per key, so a condition seen many times gives one
 *   notification; resolving it closes the row and queues the resolution message.
 * - `notification_outbox`: one row per message, written in the same transaction as the state
 *   that caused it. `fanned_out` turns false → true when the deliverer has made its deliveries.
 * - `notification_deliveries`: one row per message and channel configured at fan-out time; the
 *   deliverer claims them with SKIP LOCKED and a lease, retries with backoff, parks after N failures.
 * - `idp_activity`: when an authenticated SCIM request last arrived (any token, SCIM_TOKEN
 *   included), written at most once a minute per process; idp.silent compares it with the clock.
 */
export class Notifications1763700000800 implements MigrationInterface {
  name = "Notifications1763700000800";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE notification_incidents (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        key text NOT NULL,
        event text NOT NULL,
        opened_at timestamptz NOT NULL,
        resolved_at timestamptz
      )`);
    await q.query(
      `CREATE UNIQUE INDEX notification_incidents_open ON notification_incidents (key) WHERE resolved_at IS NULL`,
    );
    await q.query(`
      CREATE TABLE notification_outbox (
        id bigserial PRIMARY KEY,
        incident_id uuid NOT NULL REFERENCES notification_incidents (id) ON DELETE CASCADE,
        event text NOT NULL,
        occurred_at timestamptz NOT NULL,
        summary text NOT NULL,
        details jsonb NOT NULL DEFAULT '{}',
        -- path under PUBLIC_URL for the link (e.g. /admin/approvals); joined at send time
        link_path text,
        fanned_out boolean NOT NULL DEFAULT false
      )`);
    await q.query(`CREATE INDEX notification_outbox_unfanned ON notification_outbox (id) WHERE NOT fanned_out`);
    await q.query(`
      CREATE TABLE notification_deliveries (
        outbox_id bigint NOT NULL REFERENCES notification_outbox (id) ON DELETE CASCADE,
        channel text NOT NULL,
        state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'parked')),
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NOT NULL,
        -- the deliverer sending it now, and until when its claim holds (a crashed sender's claim lapses)
        lease_owner text,
        lease_until timestamptz,
        last_error text,
        sent_at timestamptz,
        PRIMARY KEY (outbox_id, channel)
      )`);
    await q.query(
      `CREATE TABLE idp_activity (id boolean PRIMARY KEY DEFAULT true CHECK (id), last_request_at timestamptz NOT NULL)`,
    );
    await q.query(
      `CREATE INDEX notification_deliveries_due ON notification_deliveries (next_attempt_at) WHERE state = 'pending'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE idp_activity`);
    await q.query(`DROP TABLE notification_deliveries`);
    await q.query(`DROP TABLE notification_outbox`);
    await q.query(`DROP TABLE notification_incidents`);
  }
}
