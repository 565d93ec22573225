import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/clock.js";
import { parseMapping } from "../../src/mapping/file.js";
import { previewMapping } from "../../src/admin/mapping/mapping.js";
import { usersPage } from "../../src/admin/users/users.js";
import { budgetPolicy } from "../../src/reconcile/budget/budget.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";
import { TEST_MAPPING } from "../support/stack.js";
import { DesiredAccess } from "../../src/mapping/desiredAccess.js";

/** 20k by default to keep the suite quick; PREVIEW_SCALE_USERS=100000 took about 4 s here (2 cores). */
const USERS = Number(process.env.PREVIEW_SCALE_USERS ?? 20_000);

/** The mapping preview streams the IdP directory in batches and keeps only the first changes for the page. */
describe("mapping preview at scale", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
    const t0 = Date.now();
    await database.db.query(
      `INSERT INTO idp_groups (display_name, resource) VALUES ('Marketing', '{}'), ('Platform Admins', '{}'), ('Analysts-EU', '{}')`,
    );
    await database.db.query(
      `INSERT INTO idp_users (user_name, given_name, family_name, resource) SELECT 'u' || i || '@example.com', 'U', 'Ser', '{}' FROM generate_series(1, $1) i`,
      [USERS],
    );
    await database.db.query(`INSERT INTO idp_group_members (group_id, user_id)
      SELECT g.id, u.id FROM idp_users u JOIN idp_groups g ON (g.display_name = 'Marketing' AND u.user_name LIKE '%1@%') OR (g.display_name = 'Analysts-EU' AND u.user_name LIKE '%3@%')`);
    console.log(`seeded ${USERS} users in ${Date.now() - t0} ms`);
  }, 600_000);
  afterAll(async () => database?.drop());

  it("searches users by userName prefix, paged", async () => {
    const deps = { db: database.db, clock: systemClock };
    const t0 = Date.now();
    const first = await usersPage(deps, { page: 1 }, 50, 0);
    const found = await usersPage(deps, { q: "U1999@", page: 1 }, 50, 0);
    const deep = await usersPage(deps, { page: 100 }, 50, 99 * 50);
    console.log(`user search over ${USERS} users: ${Date.now() - t0} ms for three pages`);
    expect(first.rows).toHaveLength(50);
    expect(first.hasNext).toBe(true);
    expect(found.rows.map((r) => r.userName)).toEqual(["u1999@example.com"]);
    expect(deep.rows).toHaveLength(50);
  });

  it("compares every user under both mappings, and lists only the first changes", async () => {
    const mapping = parseMapping(TEST_MAPPING, "m");
    const deps = {
      db: database.db,
      clock: systemClock,
      budget: budgetPolicy(5000, 10, "utc-day"),
      desired: new DesiredAccess({ path: "m", current: () => mapping, sourceText: () => TEST_MAPPING }),
    };
    const draft = TEST_MAPPING.replace(
      "permissions: [basic_access, send_campaigns_canvases]",
      "permissions: [basic_access]",
    );
    const t0 = Date.now();
    const preview = await previewMapping(deps, draft);
    console.log(
      `preview of ${USERS} users: ${Date.now() - t0} ms, ${preview.usersAffected} affected, ${preview.durationLabel}`,
    );
    expect(preview.usersAffected).toBe(USERS / 10);
    expect(preview.changes).toHaveLength(Math.min(500, USERS / 10));
  }, 600_000);
});
