import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prng, runPool, type Rng } from "../support/fuzz.js";
import { TEST_CONNECTION_NAME } from "../support/db.js";
import { eventually } from "../support/wait.js";
import { GROUP_SCHEMA, PATCH_OP, startScimHarness, userBody, type ScimHarness } from "../support/scimHarness.js";

/**
 * Group writes that overlap in their members, many at once, as an IdP pushing a reorganisation
 * does: none may deadlock in PostgreSQL. A group write marks the users it touched in the
 * reconcile queue; when it marked the added ones and then the removed ones in two statements, two
 * writes with crossed sets locked the same queue rows in opposite orders, and PostgreSQL killed
 * one (a 503 once the retries ran out: the SCIM fuzz saw it under load). Counted by PostgreSQL
 * itself (pg_stat_database.deadlocks), not by the connector.
 */

const USERS = 16;
const GROUPS = 8;
const WRITES = 400;

describe("concurrent group writes with crossed members", () => {
  let h: ScimHarness;
  const users: string[] = [];
  const groups: string[] = [];

  beforeAll(async () => {
    h = await startScimHarness();
    for (let i = 0; i < USERS; i++) users.push((await h.post("/Users", userBody())).body.id);
    for (let g = 0; g < GROUPS; g++)
      groups.push(
        (
          await h.post("/Groups", {
            schemas: [GROUP_SCHEMA],
            displayName: `Crossed ${g}`,
            members: users.filter((_, i) => i % GROUPS !== g).map((value) => ({ value })),
          })
        ).body.id,
      );
  });
  afterAll(async () => h?.close());

  /** About half the users, in a random order. */
  const someUsers = (rng: Rng) => users.filter(() => rng.chance(0.5)).sort(() => rng.next() - 0.5);

  it("answers every write and PostgreSQL records no deadlock", { timeout: 180_000 }, async () => {
    const rng = prng(46_0001);
    const failures: string[] = [];
    await runPool(WRITES, 16, async (i) => {
      const group = rng.pick(groups);
      const members = someUsers(rng).map((value) => ({ value }));
      const res =
        i % 3 === 0
          ? await h.put(`/Groups/${group}`, {
              schemas: [GROUP_SCHEMA],
              displayName: `Crossed ${groups.indexOf(group)}`,
              members,
            })
          : i % 3 === 1
            ? // Adds and removes in one PATCH: the transaction, not Okta's one-statement form.
              await h.patch(`/Groups/${group}`, {
                schemas: [PATCH_OP],
                Operations: [
                  { op: "add", path: "members", value: members.slice(0, 4) },
                  { op: "remove", path: `members[value eq "${rng.pick(users)}"]` },
                  { op: "add", path: "members", value: members.slice(4) },
                ],
              })
            : await h.post("/Groups", { schemas: [GROUP_SCHEMA], displayName: `New ${i}`, members });
      if (res.status >= 300) failures.push(`#${i} ${res.status} ${res.text.slice(0, 200)}`);
    });
    expect(failures).toEqual([]);

    // A backend reports its deadlocks to the statistics when it goes idle or exits: close the
    // connector and wait for its connections to be gone, then read what PostgreSQL counted.
    await h.service.close();
    const db = h.database.db;
    await eventually("the connector's connections closed", async () => {
      const [row] = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name <> $1`,
        [TEST_CONNECTION_NAME],
      );
      return row!.n === 0;
    });
    const [stats] = await db.query<{ deadlocks: number }>(
      `SELECT pg_stat_clear_snapshot(), (SELECT deadlocks::int FROM pg_stat_database WHERE datname = current_database()) AS deadlocks`,
    );
    expect(stats!.deadlocks).toBe(0);
  });
});
