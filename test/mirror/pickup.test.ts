import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { constraintName } from "../../src/errors.js";
import { claimPendingChanges, settleClaimedChanges } from "../../src/db/mirror/syncRepository.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";
import { pendingCount, upsertEmailStates } from "../support/mirror.js";

/** The table contract and change pickup, at the database level (no platform involved). */

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t?.drop();
});
beforeEach(async () => {
  await t.db.query(
    `TRUNCATE mirror.email_subscription_states, mirror.subscription_group_states, mirror.preference_centers, mirror_sync.pending`,
  );
});

async function violation(sql: string, params: unknown[] = []): Promise<string | undefined> {
  try {
    await t.db.query(sql, params);
    return undefined;
  } catch (error) {
    return constraintName(error);
  }
}

describe("the database refuses what the platform would, by constraint name", () => {
  it.each([
    {
      sql: `INSERT INTO mirror.email_subscription_states VALUES ('not-an-email', 'subscribed')`,
      constraint: "email_subscription_states_email_format",
    },
    {
      sql: `INSERT INTO mirror.email_subscription_states VALUES ('a@b.co', 'maybe')`,
      constraint: "email_subscription_states_state_valid",
    },
    {
      sql: `INSERT INTO mirror.subscription_group_states (subscription_group_id, email, phone, subscription_state) VALUES ('g', 'a@b.co', '+15550001', 'subscribed')`,
      constraint: "subscription_group_states_exactly_one_identifier",
    },
    {
      sql: `INSERT INTO mirror.subscription_group_states (subscription_group_id, subscription_state) VALUES ('g', 'subscribed')`,
      constraint: "subscription_group_states_exactly_one_identifier",
    },
    {
      sql: `INSERT INTO mirror.subscription_group_states (subscription_group_id, phone, subscription_state) VALUES ('g', '5550001', 'subscribed')`,
      constraint: "subscription_group_states_phone_e164",
    },
    {
      sql: `INSERT INTO mirror.subscription_group_states (subscription_group_id, email, subscription_state) VALUES ('g', 'x@y', 'subscribed')`,
      constraint: "subscription_group_states_email_format",
    },
    {
      sql: `INSERT INTO mirror.subscription_group_states (subscription_group_id, external_id, subscription_state) VALUES ('g', 'u1', 'opted_in')`,
      constraint: "subscription_group_states_state_valid",
    },
    {
      sql: `INSERT INTO mirror.preference_centers (preference_center_external_id, page_html, confirmation_html, state) VALUES ('p', '<p>', '<p>', 'live')`,
      constraint: "preference_centers_state_valid",
    },
    {
      sql: `INSERT INTO mirror.preference_centers (preference_center_external_id, page_html, confirmation_html, options) VALUES ('p', '<p>', '<p>', '[1]')`,
      constraint: "preference_centers_options_object",
    },
  ])("$constraint", async ({ sql, constraint }) => {
    expect(await violation(sql)).toBe(constraint);
  });

  it("keeps one row per (group, identifier) and lets the ETL upsert on it", async () => {
    const upsert = `INSERT INTO mirror.subscription_group_states (subscription_group_id, phone, subscription_state) VALUES ('g', '+15550001', $1)
                    ON CONFLICT (subscription_group_id, external_id, email, phone) DO UPDATE SET subscription_state = EXCLUDED.subscription_state`;
    await t.db.query(upsert, ["subscribed"]);
    await t.db.query(upsert, ["unsubscribed"]);
    const rows = await t.db.query(`SELECT subscription_state FROM mirror.subscription_group_states`);
    expect(rows).toEqual([{ subscription_state: "unsubscribed" }]);
    expect(
      await violation(
        `INSERT INTO mirror.subscription_group_states (subscription_group_id, phone, subscription_state) VALUES ('g', '+15550001', 'subscribed')`,
      ),
    ).toBe("subscription_group_states_one_row_per_identifier");
  });
});

describe("change pickup", () => {
  it("coalesces changes per key and skips updates the platform would not see", async () => {
    await upsertEmailStates(t.db, [
      ["a@x.io", "subscribed"],
      ["b@x.io", "subscribed"],
    ]);
    await upsertEmailStates(t.db, [["a@x.io", "unsubscribed"]]);
    await t.db.query(`UPDATE mirror.email_subscription_states SET updated_at = now() + interval '1 hour'`);
    const rows: { key: string; payload: unknown }[] = await t.db.query(
      `SELECT key, payload FROM mirror_sync.pending ORDER BY key`,
    );
    expect(rows).toEqual([
      { key: "a@x.io", payload: { email: "a@x.io", state: "unsubscribed" } },
      { key: "b@x.io", payload: { email: "b@x.io", state: "subscribed" } },
    ]);
  });

  it("records subscription-group rows with their identifier kind and preference centers with their workspace", async () => {
    await t.db.query(
      `INSERT INTO mirror.subscription_group_states (subscription_group_id, email, subscription_state) VALUES ('g1', 'a@x.io', 'subscribed')`,
    );
    await t.db.query(
      `INSERT INTO mirror.subscription_group_states (subscription_group_id, external_id, subscription_state) VALUES ('g1', 'u1', 'unsubscribed')`,
    );
    await t.db.query(
      `INSERT INTO mirror.preference_centers (preference_center_external_id, workspace, page_html, confirmation_html) VALUES ('pc1', 'eu', '<p>', '<p>ok')`,
    );
    const rows: { kind: string; batch_key: string; payload: Record<string, unknown> }[] = await t.db.query(
      `SELECT kind, batch_key, payload FROM mirror_sync.pending ORDER BY kind, batch_key`,
    );
    expect(rows.map((r) => [r.kind, r.batch_key])).toEqual([
      ["preference_center", "eu"],
      ["subscription_group", `["g1", "subscribed", "email"]`],
      ["subscription_group", `["g1", "unsubscribed", "external_id"]`],
    ]);
    expect(rows[2].payload).toEqual({ group: "g1", type: "external_id", id: "u1", state: "unsubscribed" });
  });

  it("an ack for an older version leaves a newer change pending and claimable", async () => {
    const now = new Date();
    await upsertEmailStates(t.db, [["a@x.io", "subscribed"]]);
    const [claimed] = await claimPendingChanges(t.db, {
      kind: "email",
      claimId: crypto.randomUUID(),
      limit: 10,
      now,
      leaseMs: 60_000,
    });
    // Claimed rows are not handed out twice while the lease runs.
    expect(
      await claimPendingChanges(t.db, { kind: "email", claimId: crypto.randomUUID(), limit: 10, now, leaseMs: 60_000 }),
    ).toEqual([]);
    await upsertEmailStates(t.db, [["a@x.io", "opted_in"]]);
    const claimId = ((await t.db.query(`SELECT claim_id FROM mirror_sync.pending`)) as { claim_id: string }[])[0]
      .claim_id;
    expect(
      await settleClaimedChanges(
        t.db,
        "email",
        claimId,
        [{ key: claimed.key, version: claimed.version, outcome: "ack" }],
        now,
      ),
    ).toEqual([]);
    const [again] = await claimPendingChanges(t.db, {
      kind: "email",
      claimId: crypto.randomUUID(),
      limit: 10,
      now,
      leaseMs: 60_000,
    });
    expect(again.payload).toEqual({ email: "a@x.io", state: "opted_in" });
    expect(BigInt(again.version)).toBeGreaterThan(BigInt(claimed.version));
  });

  it("an expired lease is claimable by another worker; the old claimant can no longer settle it", async () => {
    const now = new Date();
    await upsertEmailStates(t.db, [["a@x.io", "subscribed"]]);
    const first = crypto.randomUUID();
    const [row] = await claimPendingChanges(t.db, { kind: "email", claimId: first, limit: 10, now, leaseMs: 1_000 });
    const later = new Date(now.getTime() + 2_000);
    const second = crypto.randomUUID();
    expect(
      await claimPendingChanges(t.db, { kind: "email", claimId: second, limit: 10, now: later, leaseMs: 1_000 }),
    ).toHaveLength(1);
    await settleClaimedChanges(t.db, "email", first, [{ key: row.key, version: row.version, outcome: "ack" }], later);
    expect(await pendingCount(t.db)).toBe(1);
    await settleClaimedChanges(t.db, "email", second, [{ key: row.key, version: row.version, outcome: "ack" }], later);
    expect(await pendingCount(t.db)).toBe(0);
  });

  it("a settlement meeting a row an ETL transaction holds is deferred, not waited for", async () => {
    const now = new Date();
    await upsertEmailStates(t.db, [["a@x.io", "subscribed"]]);
    const claimId = crypto.randomUUID();
    const [row] = await claimPendingChanges(t.db, { kind: "email", claimId, limit: 10, now, leaseMs: 60_000 });
    const deferred = await t.db.session(async (etl) => {
      await etl.query("BEGIN");
      await etl.query(`UPDATE mirror.email_subscription_states SET subscription_state = 'unsubscribed'`);
      const settled = await settleClaimedChanges(
        t.db,
        "email",
        claimId,
        [{ key: row.key, version: row.version, outcome: "ack" }],
        now,
      );
      expect(settled).toHaveLength(1);
      await etl.query("COMMIT");
      return settled;
    });
    // Retried after the commit: the version moved on, so the key is released for the newer value.
    expect(await settleClaimedChanges(t.db, "email", claimId, deferred, now)).toEqual([]);
    const [next] = await claimPendingChanges(t.db, {
      kind: "email",
      claimId: crypto.randomUUID(),
      limit: 10,
      now,
      leaseMs: 60_000,
    });
    expect(next.payload).toEqual({ email: "a@x.io", state: "unsubscribed" });
  });
});
