import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * The mirror tables (schema `mirror`, a contract with customers' ETL: see docs/mirror.md) and the
 * sync's bookkeeping (schema `mirror_sync`, ours alone).
 *
 * Change pickup is a statement-level trigger per table and event that copies each changed row's
 * pushable value into `mirror_sync.pending`, upserted per key, in the ETL's own transaction. So a
 * change is visible to the sync exactly when it commits (no timestamp polling that misses late
 * commits), changes to one key coalesce, and the ETL needs nothing but plain INSERT/UPDATE/upsert.
 * Every change takes a fresh `version` from one sequence; the sync acknowledges a key only at the
 * version it pushed, so a change committed while a push is in flight stays pending.
 */
export class Mirror1763700000300 implements MigrationInterface {
  name = "Mirror1763700000300";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE SCHEMA IF NOT EXISTS mirror`);
    await q.query(`CREATE SCHEMA IF NOT EXISTS mirror_sync`);
    await this.mirrorTables(q);
    await this.bookkeeping(q);
    await this.triggers(q);
  }

  private async mirrorTables(q: QueryRunner): Promise<void> {
    // Same shapes the platform accepts (its email and E.164 rules), so a bad value fails in the
    // ETL's transaction with a constraint name instead of at the platform hours later.
    const email = `~ '^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$'`;
    await q.query(`
      CREATE TABLE mirror.email_subscription_states (
        email text PRIMARY KEY,
        subscription_state text NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT email_subscription_states_email_format CHECK (email ${email} AND length(email) <= 255),
        CONSTRAINT email_subscription_states_state_valid CHECK (subscription_state IN ('subscribed', 'unsubscribed', 'opted_in'))
      )`);
    await q.query(`
      CREATE TABLE mirror.subscription_group_states (
        subscription_group_id text NOT NULL,
        external_id text,
        email text,
        phone text,
        subscription_state text NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT subscription_group_states_group_id_not_blank CHECK (btrim(subscription_group_id) <> ''),
        CONSTRAINT subscription_group_states_exactly_one_identifier CHECK (num_nonnulls(external_id, email, phone) = 1),
        CONSTRAINT subscription_group_states_external_id_not_blank CHECK (btrim(external_id) <> ''),
        CONSTRAINT subscription_group_states_email_format CHECK (email ${email} AND length(email) <= 255),
        CONSTRAINT subscription_group_states_phone_e164 CHECK (phone ~ '^\\+[1-9][0-9]{1,14}$'),
        CONSTRAINT subscription_group_states_state_valid CHECK (subscription_state IN ('subscribed', 'unsubscribed')),
        -- Exactly one identifier is set, so NULLS NOT DISTINCT makes this "one row per (group, identifier)"
        -- and gives the ETL a plain conflict target: ON CONFLICT (subscription_group_id, external_id, email, phone).
        CONSTRAINT subscription_group_states_one_row_per_identifier
          UNIQUE NULLS NOT DISTINCT (subscription_group_id, external_id, email, phone)
      )`);
    await q.query(`
      CREATE TABLE mirror.preference_centers (
        preference_center_external_id text PRIMARY KEY,
        workspace text NOT NULL DEFAULT 'default',
        name text,
        title text,
        page_html text NOT NULL,
        confirmation_html text NOT NULL,
        state text,
        options jsonb,
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT preference_centers_external_id_not_blank CHECK (btrim(preference_center_external_id) <> ''),
        CONSTRAINT preference_centers_workspace_not_blank CHECK (btrim(workspace) <> ''),
        CONSTRAINT preference_centers_state_valid CHECK (state IN ('active', 'draft')),
        CONSTRAINT preference_centers_options_object CHECK (options IS NULL OR jsonb_typeof(options) = 'object')
      )`);
  }

  private async bookkeeping(q: QueryRunner): Promise<void> {
    await q.query(`CREATE SEQUENCE mirror_sync.change_version`);
    await q.query(`
      CREATE TABLE mirror_sync.pending (
        kind text NOT NULL CHECK (kind IN ('email', 'subscription_group', 'preference_center')),
        -- identity of the mirror row: the email, [group, identifier type, identifier], or the page's id
        key text NOT NULL,
        -- rows that may share one request sort together: the state, [group, state, type], or the workspace
        batch_key text NOT NULL,
        version bigint NOT NULL,
        -- the value to push, copied in the ETL's transaction so a claim reads value and version atomically
        payload jsonb NOT NULL,
        first_changed_at timestamptz NOT NULL DEFAULT now(),
        changed_at timestamptz NOT NULL DEFAULT now(),
        claim_id uuid,
        claimed_until timestamptz,
        attempts integer NOT NULL DEFAULT 0,
        last_error text,
        parked_at timestamptz,
        park_reason text,
        PRIMARY KEY (kind, key)
      ) WITH (fillfactor = 80)`); // room for HOT updates: a claim changes no indexed column
    await q.query(
      `CREATE INDEX pending_ready ON mirror_sync.pending (kind, batch_key, version) WHERE parked_at IS NULL`,
    );
    await q.query(`CREATE INDEX pending_parked ON mirror_sync.pending (parked_at) WHERE parked_at IS NOT NULL`);

    // One row per request sent (or refused), for the status API and the admin UI's history.
    await q.query(`
      CREATE TABLE mirror_sync.push_log (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        at timestamptz NOT NULL DEFAULT now(),
        kind text NOT NULL,
        endpoint text NOT NULL,
        workspace text,
        changes integer NOT NULL,
        outcome text NOT NULL,
        status integer,
        detail text
      )`);
    await q.query(`CREATE INDEX push_log_at ON mirror_sync.push_log (at)`);

    // Preference-center sends per workspace: the 10-per-minute pace, shared by every replica.
    await q.query(`
      CREATE TABLE mirror_sync.pace_slots (
        scope text NOT NULL,
        sent_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX pace_slots_scope ON mirror_sync.pace_slots (scope, sent_at)`);
  }

  private async triggers(q: QueryRunner): Promise<void> {
    // A newer change replaces the payload and version, un-parks the key (the ETL may have fixed
    // it) and keeps any claim, so a push in flight is never overtaken by a second one.
    const upsert = `
      ON CONFLICT (kind, key) DO UPDATE SET
        version = EXCLUDED.version, payload = EXCLUDED.payload, batch_key = EXCLUDED.batch_key,
        first_changed_at = CASE WHEN pending.parked_at IS NULL THEN pending.first_changed_at ELSE now() END,
        changed_at = now(), attempts = 0, last_error = NULL, parked_at = NULL, park_reason = NULL`;
    // old_rows exists only in UPDATE triggers, and plpgsql plans a statement when it first runs it,
    // so the two statements live in separate branches. An update that changes nothing the platform
    // sees (only updated_at, or the same value again) enqueues nothing.
    const enqueue = (fn: string, insertSelect: string, unchanged: string) => `
      CREATE FUNCTION mirror_sync.${fn}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          INSERT INTO mirror_sync.pending (kind, key, batch_key, version, payload)
          ${insertSelect}
          ${upsert};
        ELSE
          INSERT INTO mirror_sync.pending (kind, key, batch_key, version, payload)
          ${insertSelect}
          WHERE NOT EXISTS (SELECT 1 FROM old_rows o WHERE ${unchanged})
          ${upsert};
        END IF;
        RETURN NULL;
      END $$`;

    await q.query(
      enqueue(
        "enqueue_email_states",
        `SELECT 'email', n.email, n.subscription_state, nextval('mirror_sync.change_version'),
                jsonb_build_object('email', n.email, 'state', n.subscription_state)
           FROM new_rows n`,
        `o.email = n.email AND o.subscription_state = n.subscription_state`,
      ),
    );
    await q.query(
      enqueue(
        "enqueue_subscription_group_states",
        `SELECT 'subscription_group',
                jsonb_build_array(n.subscription_group_id, t.type, t.id)::text,
                jsonb_build_array(n.subscription_group_id, n.subscription_state, t.type)::text,
                nextval('mirror_sync.change_version'),
                jsonb_build_object('group', n.subscription_group_id, 'type', t.type, 'id', t.id, 'state', n.subscription_state)
           FROM new_rows n
          CROSS JOIN LATERAL (
                SELECT CASE WHEN n.email IS NOT NULL THEN 'email' WHEN n.phone IS NOT NULL THEN 'phone' ELSE 'external_id' END AS type,
                       coalesce(n.email, n.phone, n.external_id) AS id) t`,
        `o.subscription_group_id = n.subscription_group_id
           AND o.email IS NOT DISTINCT FROM n.email AND o.phone IS NOT DISTINCT FROM n.phone
           AND o.external_id IS NOT DISTINCT FROM n.external_id AND o.subscription_state = n.subscription_state`,
      ),
    );
    await q.query(
      enqueue(
        "enqueue_preference_centers",
        `SELECT 'preference_center', n.preference_center_external_id, n.workspace, nextval('mirror_sync.change_version'),
                jsonb_build_object('id', n.preference_center_external_id, 'workspace', n.workspace, 'name', n.name,
                                   'title', n.title, 'page_html', n.page_html, 'confirmation_html', n.confirmation_html,
                                   'state', n.state, 'options', n.options)
           FROM new_rows n`,
        `o.preference_center_external_id = n.preference_center_external_id
           AND o.workspace = n.workspace AND o.name IS NOT DISTINCT FROM n.name
           AND o.title IS NOT DISTINCT FROM n.title AND o.page_html = n.page_html
           AND o.confirmation_html = n.confirmation_html AND o.state IS NOT DISTINCT FROM n.state
           AND o.options IS NOT DISTINCT FROM n.options`,
      ),
    );

    // Transition tables allow one event per trigger, hence an INSERT and an UPDATE trigger each.
    // An ETL upsert fires both (inserted rows in one, updated rows in the other).
    const tables: [string, string][] = [
      ["email_subscription_states", "enqueue_email_states"],
      ["subscription_group_states", "enqueue_subscription_group_states"],
      ["preference_centers", "enqueue_preference_centers"],
    ];
    for (const [table, fn] of tables) {
      await q.query(`
        CREATE TRIGGER ${table}_enqueue_insert AFTER INSERT ON mirror.${table}
          REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION mirror_sync.${fn}()`);
      await q.query(`
        CREATE TRIGGER ${table}_enqueue_update AFTER UPDATE ON mirror.${table}
          REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION mirror_sync.${fn}()`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP SCHEMA mirror_sync CASCADE`);
    await q.query(`DROP SCHEMA mirror CASCADE`);
  }
}
