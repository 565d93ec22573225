import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ManualClock } from "../../src/clock.js";
import { loadEnv } from "../../src/config/env.js";
import { applyRetention, retentionPolicyFromEnv } from "../../src/jobs/retention.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";
import { startStack } from "../support/stack.js";

/**
 * Data retention against a real database: deactivated users' personal data goes after the
 * configured days (their identifiers and the log stay, for the audit); old budget debits and
 * finished resync runs go; everything younger, active or running stays.
 */

const DAY = 86_400_000;
const NOW = new Date("2026-06-01T12:00:00Z");
const ago = (days: number) => new Date(NOW.getTime() - days * DAY);

describe("data retention", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => database?.drop());

  const sql = <T = Record<string, unknown>>(text: string, params: unknown[] = []) => database.db.query<T>(text, params);

  async function user(userName: string, active: boolean, updatedDaysAgo: number): Promise<string> {
    const resource = {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
      userName,
      externalId: `ext-${userName}`,
      active,
      name: { givenName: "Given", familyName: "Family" },
      emails: [{ value: userName, primary: true }],
      phoneNumbers: [{ value: "+1 555 0100" }],
    };
    const [row] = await sql<{ id: string }>(
      `INSERT INTO idp_users (user_name, external_id, active, display_name, given_name, family_name, department, resource, updated_at)
       VALUES ($1, $2, $3, 'Given Family', 'Given', 'Family', 'Finance', $4, $5) RETURNING id`,
      [userName, `ext-${userName}`, active, JSON.stringify(resource), ago(updatedDaysAgo)],
    );
    return row!.id;
  }

  it("settings: personal data kept until set; debits 35 days and runs 90 by default; a 1-day ledger is refused", () => {
    expect(retentionPolicyFromEnv(loadEnv({}))).toEqual({
      deactivatedUserDays: 0,
      budgetDebitDays: 35,
      resyncRunDays: 90,
      platformEventDays: 400,
    });
    expect(() => loadEnv({ RETENTION_BUDGET_DEBITS_DAYS: "1" })).toThrow(/RETENTION_BUDGET_DEBITS_DAYS: must be 0/);
  });

  it("scrubs deactivated users' personal data, deletes old debits and finished runs, and keeps the rest", async () => {
    const gone = await user("ann@example.com", false, 40);
    const recent = await user("bob@example.com", false, 5);
    const active = await user("carl@example.com", true, 400);
    await sql(
      `INSERT INTO reconcile_log (at, user_id, user_name, action, outcome) VALUES ($1, $2, 'ann@example.com', 'deprovision', 'succeeded')`,
      [ago(39), gone],
    );
    for (const days of [40, 36, 1, 0])
      await sql(`INSERT INTO budget_debits (spent_at, action) VALUES ($1, 'create')`, [ago(days)]);
    const run = async (id: string, status: string, startedDaysAgo: number, finished: boolean) =>
      sql(
        `INSERT INTO resync_runs (id, status, phase, dry_run, verify, trigger, started_at, finished_at)
         VALUES ($1, $2, $3, false, false, 'cron', $4, $5)`,
        [id, status, finished ? "done" : "plan", ago(startedDaysAgo), finished ? ago(startedDaysAgo) : null],
      );
    await run("00000000-0000-4000-8000-000000000001", "succeeded", 120, true);
    await run("00000000-0000-4000-8000-000000000002", "failed", 10, true);
    await run("00000000-0000-4000-8000-000000000003", "running", 200, false);
    // The platform's Security Event record: events older than PLATFORM_EVENTS_RETENTION_DAYS go.
    for (const [days, fingerprint] of [
      [401, "old"],
      [399, "young"],
    ] as const)
      await sql(
        `INSERT INTO platform_events (fingerprint, at, actor, event, kind, imported_at) VALUES ($1, $2, 'a', 'Signed In', 'signed-in', $3)`,
        [fingerprint, ago(days), NOW],
      );

    const policy = retentionPolicyFromEnv(loadEnv({ RETENTION_DEACTIVATED_USER_DAYS: "30" }));
    expect(await applyRetention(database.db, NOW, policy)).toEqual({
      scrubbedUsers: 1,
      debits: 2,
      runs: 1,
      platformEvents: 1,
    });

    const users = await sql<{
      id: string;
      user_name: string;
      display_name: string | null;
      given_name: string | null;
      family_name: string | null;
      department: string | null;
      resource: Record<string, unknown>;
    }>(
      `SELECT id, user_name, display_name, given_name, family_name, department, resource FROM idp_users ORDER BY user_name`,
    );
    const byId = new Map(users.map((u) => [u.id, u]));
    // Every personal column the scrub clears: the four profile columns and the resource beyond its identifiers.
    expect(byId.get(gone)).toMatchObject({
      user_name: "ann@example.com",
      display_name: null,
      given_name: null,
      family_name: null,
      department: null,
    });
    expect(byId.get(gone)!.resource).toEqual({
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
      userName: "ann@example.com",
      externalId: "ext-ann@example.com",
      active: false,
    });
    for (const kept of [recent, active]) {
      expect(byId.get(kept)).toMatchObject({
        display_name: "Given Family",
        given_name: "Given",
        family_name: "Family",
        department: "Finance",
      });
      expect(byId.get(kept)!.resource).toHaveProperty("phoneNumbers");
    }
    expect(await sql(`SELECT user_name FROM reconcile_log WHERE user_id = $1`, [gone])).toEqual([
      { user_name: "ann@example.com" },
    ]);
    expect((await sql<{ n: number }>(`SELECT count(*)::int AS n FROM budget_debits`))[0]!.n).toBe(2);
    expect((await sql<{ id: string }>(`SELECT id FROM resync_runs ORDER BY id`)).map((r) => r.id)).toEqual([
      "00000000-0000-4000-8000-000000000002",
      "00000000-0000-4000-8000-000000000003",
    ]);
    expect(await sql(`SELECT fingerprint FROM platform_events`)).toEqual([{ fingerprint: "young" }]);

    // Nothing left to do: a second pass changes nothing (the scrubbed user is not rewritten every hour).
    expect(await applyRetention(database.db, NOW, policy)).toEqual({
      scrubbedUsers: 0,
      debits: 0,
      runs: 0,
      platformEvents: 0,
    });
  });
});

describe("the scheduler applies the retention", () => {
  it("a deactivated user's profile is cleared by the scheduler's hourly pass", { timeout: 60_000 }, async () => {
    const clock = new ManualClock();
    const stack = await startStack({
      clock,
      workers: false,
      env: { RETENTION_DEACTIVATED_USER_DAYS: "30", SCHEDULER_TICK_MS: "50", RESYNC_CRON: "off" },
    });
    try {
      const resource = {
        schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
        userName: "dan@example.com",
        active: false,
      };
      const [row] = await stack.database.db.query<{ id: string }>(
        `INSERT INTO idp_users (user_name, active, given_name, resource, updated_at) VALUES ('dan@example.com', false, 'Dan', $1, $2) RETURNING id`,
        [JSON.stringify({ ...resource, name: { givenName: "Dan" } }), new Date(clock.now().getTime() - 40 * DAY)],
      );
      clock.advance(61 * 60_000); // the scheduler's retention pass runs hourly
      await vi.waitFor(
        async () => {
          const [user] = await stack.database.db.query<{ given_name: string | null; resource: unknown }>(
            `SELECT given_name, resource FROM idp_users WHERE id = $1`,
            [row!.id],
          );
          expect(user).toEqual({ given_name: null, resource });
        },
        { timeout: 30_000, interval: 50 },
      );
    } finally {
      await stack.close();
    }
  });
});
