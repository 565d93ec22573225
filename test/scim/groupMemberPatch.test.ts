import pg from "pg";
import Transport from "winston-transport";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { resetLogger, setLogLevel, setLogTransport } from "../../src/logging/logger.js";
import { eventually } from "../support/wait.js";
import { PATCH_OP, startScimHarness, userBody, type ScimHarness } from "../support/scimHarness.js";

/**
 * Okta's membership PATCH (one add or one remove, no If-Match) runs as one statement
 * (db/idp/groupRepository.ts `patchGroupMembersMarked`); it must leave the world as the transaction does.
 */

class CaptureTransport extends Transport {
  readonly records: Record<string, unknown>[] = [];
  override log(info: Record<string, unknown>, callback: () => void): void {
    this.records.push(info);
    callback();
  }
}

type Mark = { user_id: string; trigger: { kind: string; method?: string; resource?: string; change?: unknown } };

describe("membership PATCH in one statement", () => {
  let h: ScimHarness;
  const users: string[] = [];
  const capture = new CaptureTransport();

  beforeAll(async () => {
    h = await startScimHarness();
    for (let i = 0; i < 40; i++) users.push((await h.post("/Users", userBody())).body.id);
    // Every mark (an insert, or an update that bumps the generation), whatever the worker does with the row after.
    await h.service.db.query(`
      CREATE TABLE test_marks (seq bigserial, user_id uuid NOT NULL, trigger jsonb NOT NULL);
      CREATE FUNCTION test_record_mark() RETURNS trigger LANGUAGE plpgsql AS
        $$ BEGIN INSERT INTO test_marks (user_id, trigger) VALUES (NEW.user_id, NEW.trigger); RETURN NEW; END $$;
      CREATE TRIGGER test_mark_insert AFTER INSERT ON reconcile_queue
        FOR EACH ROW EXECUTE FUNCTION test_record_mark();
      CREATE TRIGGER test_mark_update AFTER UPDATE ON reconcile_queue
        FOR EACH ROW WHEN (OLD.generation IS DISTINCT FROM NEW.generation) EXECUTE FUNCTION test_record_mark();`);
    setLogTransport(capture);
    setLogLevel("info");
  });
  afterAll(async () => {
    resetLogger();
    await h?.close();
  });
  beforeEach(async () => {
    await h.service.db.query(`DELETE FROM test_marks`);
    capture.records.length = 0;
  });

  const marks = () => h.service.db.query<Mark>(`SELECT user_id, trigger FROM test_marks ORDER BY seq`);
  const members = async (groupId: string) =>
    ((await h.get(`/Groups/${groupId}`)).body.members ?? []).map((m: { value: string }) => m.value).sort() as string[];
  const version = async (groupId: string) => (await h.get(`/Groups/${groupId}`)).body.meta.version as string;
  const memberOp = (op: "add" | "remove", ids: string[]) => ({
    schemas: [PATCH_OP],
    Operations: [{ op, path: "members", value: ids.map((value) => ({ value })) }],
  });
  /** Runs `work` as another writer, on its own connection. */
  const asWriter = async (work: (writer: pg.Client) => Promise<void>) => {
    const writer = new pg.Client({ connectionString: h.database.url });
    await writer.connect();
    try {
      await work(writer);
    } finally {
      await writer.end();
    }
  };
  /** Waits until a statement whose text contains `statement` waits for a lock. */
  const waitingForLock = (what: string, statement: string) =>
    eventually(what, async () => {
      const waiting = await h.service.db.query(
        `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`,
        [`%${statement}%`],
      );
      return waiting.length > 0;
    });
  const ENVELOPE = new Set(["level", "category", "message", "requestId", "timestamp"]);
  const logged = (message: string) =>
    capture.records
      .filter((r) => r.message === message)
      .map((r) => Object.fromEntries(Object.entries(r).filter(([key]) => !ENVELOPE.has(key))));

  it("20 adds and 5 removes fired together: the right members, one version per PATCH, each changed user marked once", async () => {
    const stay = users.slice(20, 25);
    const leave = users.slice(25, 30);
    const join = users.slice(0, 20);
    const g = (
      await h.post("/Groups", { displayName: "Okta Crowd", members: [...stay, ...leave].map((value) => ({ value })) })
    ).body;
    await h.service.db.query(`DELETE FROM test_marks`);
    const results = await Promise.all([
      ...join.map((id) => h.patch(`/Groups/${g.id}`, memberOp("add", [id]))),
      ...leave.map((id) => h.patch(`/Groups/${g.id}`, memberOp("remove", [id]))),
    ]);
    expect(results.map((r) => r.status)).toEqual([...join, ...leave].map(() => 204));
    expect(await members(g.id)).toEqual([...stay, ...join].sort());
    expect(await version(g.id)).toBe('W/"26"');
    // Each 204's ETag is its own version: 25 distinct ones, 2 to 26.
    expect(new Set(results.map((r) => r.headers.etag)).size).toBe(25);
    const rows = await marks();
    expect(rows.map((r) => r.user_id).sort()).toEqual([...join, ...leave].sort());
    const group = { groupId: g.id, groupName: "Okta Crowd" };
    for (const { user_id, trigger } of rows) {
      expect(trigger).toMatchObject({ kind: "idp", method: "PATCH", resource: `Groups/${g.id}` });
      expect(trigger.change).toEqual({
        what: join.includes(user_id) ? "added-to-group" : "removed-from-group",
        ...group,
      });
    }
  });

  it("a PATCH on a group that does not exist is 404 and writes nothing", async () => {
    const missing = "0d8e7a52-1111-4222-8333-444455556666";
    expect((await h.patch(`/Groups/${missing}`, memberOp("add", [users[30]!]))).status).toBe(404);
    expect((await h.patch(`/Groups/${missing}`, memberOp("remove", [users[30]!]))).status).toBe(404);
    expect((await h.patch(`/Groups/not-a-uuid`, memberOp("add", [users[30]!]))).status).toBe(404);
    expect(await h.service.db.query(`SELECT 1 FROM idp_group_members WHERE group_id = $1`, [missing])).toEqual([]);
    expect(await marks()).toEqual([]);
    expect(logged("group patched")).toEqual([]);
  });

  it("skips and logs ids that are not users; re-adding a member marks nobody", async () => {
    const g = (await h.post("/Groups", { displayName: "Lenient Okta", members: [{ value: users[31] }] })).body;
    await h.service.db.query(`DELETE FROM test_marks`);
    const ghost = "2B7E1C8E-1111-4222-8333-444455556666";
    const res = await h.patch(`/Groups/${g.id}`, memberOp("add", ["garbage", ghost, users[32]!]));
    expect(res.status).toBe(204);
    expect(res.headers.etag).toBe('W/"2"');
    expect(await members(g.id)).toEqual([users[31], users[32]].sort());
    expect(logged("unknown group members skipped")).toEqual([
      { groupId: g.id, count: 2, memberIds: ["garbage", ghost.toLowerCase()] },
    ]);
    expect(logged("group patched")).toEqual([{ groupId: g.id, membersChanged: 1, renamed: false }]);
    expect((await marks()).map((m) => m.user_id)).toEqual([users[32]]);

    await h.service.db.query(`DELETE FROM test_marks`);
    capture.records.length = 0;
    const again = await h.patch(`/Groups/${g.id}`, memberOp("add", [users[31]!, users[32]!]));
    expect(again.status).toBe(204);
    expect(again.headers.etag).toBe('W/"3"');
    expect(await marks()).toEqual([]);
    expect(logged("group patched")).toEqual([{ groupId: g.id, membersChanged: 0, renamed: false }]);
    // Removing one who is not a member: the same, nobody marked.
    expect((await h.patch(`/Groups/${g.id}`, memberOp("remove", [users[33]!]))).status).toBe(204);
    expect(await marks()).toEqual([]);
  });

  it("writes the same marks and log lines as the transaction path (If-Match) for the same request", async () => {
    const run = async (ifMatch: boolean, user: string) => {
      const g = (await h.post("/Groups", { displayName: "Twin" })).body;
      await h.service.db.query(`DELETE FROM test_marks`);
      capture.records.length = 0;
      const path = `/Groups/${g.id.toUpperCase()}`;
      const body = {
        schemas: [PATCH_OP],
        Operations: [
          { op: "add", path: "members", value: [{ value: user.toUpperCase(), display: "Shown" }, { value: "x@y.z" }] },
          { op: "add", path: "members", value: [{ value: "nope" }] },
        ],
      };
      const res = await (ifMatch ? h.patch(path, body).set("If-Match", "*") : h.patch(path, body));
      const rows = await marks();
      const anonymous = JSON.stringify({ rows, logs: capture.records })
        .replaceAll(g.id, "GROUP")
        .replaceAll(g.id.toUpperCase(), "GROUP")
        .replaceAll(user, "USER")
        .replace(/"requestId":"[^"]+"/g, '"requestId":"R"')
        .replace(/"timestamp":"[^"]+"/g, '"timestamp":"T"');
      return {
        status: res.status,
        etag: res.headers.etag,
        members: (await h.get(`/Groups/${g.id}`)).body.members,
        anonymous,
      };
    };
    const transaction = await run(true, users[34]!);
    const statement = await run(false, users[35]!);
    expect(statement.status).toBe(204);
    expect(statement).toEqual({
      ...transaction,
      members: [{ ...transaction.members[0], value: users[35], $ref: expect.stringContaining(users[35]!) }],
    });
    expect(statement.anonymous).toContain('"what":"added-to-group"');
    expect(statement.anonymous).toContain("unknown group members skipped");
  });

  it("adds and removes in one PATCH keep the transaction and their request order", async () => {
    const g = (await h.post("/Groups", { displayName: "Mixed", members: [{ value: users[37] }] })).body;
    await h.service.db.query(`DELETE FROM test_marks`);
    const res = await h.patch(`/Groups/${g.id}`, {
      schemas: [PATCH_OP],
      Operations: [
        { op: "remove", path: "members", value: [{ value: users[37] }, { value: users[38] }] },
        { op: "add", path: "members", value: [{ value: users[38] }] },
      ],
    });
    expect(res.status).toBe(204);
    expect(res.headers.etag).toBe('W/"2"');
    expect(await members(g.id)).toEqual([users[38]]);
    const what = (await marks()).map((m) => [m.user_id, (m.trigger.change as { what: string }).what]);
    expect(what.sort()).toEqual(
      [
        [users[37], "removed-from-group"],
        [users[38], "added-to-group"],
      ].sort(),
    );
  });

  it("a member add beside a user write holding that user waits for it instead of deadlocking", async () => {
    const g = (await h.post("/Groups", { displayName: "Beside" })).body;
    await asWriter(async (writer) => {
      // The writer is the one to find a deadlock (it checks first): a lock order that can deadlock fails it.
      await writer.query("SET deadlock_timeout = '10ms'");
      // A user write: the user's row first, then its mark (as patchUser and the one-statement PUT do).
      await writer.query("BEGIN");
      await writer.query(`SELECT 1 FROM idp_users WHERE id = $1 FOR UPDATE`, [users[39]]);
      const adding = h.patch(`/Groups/${g.id}`, memberOp("add", [users[39]!])).then((r) => r);
      await waitingForLock("the add waiting for the user's lock", "INSERT INTO idp_group_members");
      await writer.query(
        `INSERT INTO reconcile_queue (user_id, trigger, source_rank, generation) VALUES ($1, '{"kind":"idp"}', 0, 1)
         ON CONFLICT (user_id) DO UPDATE SET generation = reconcile_queue.generation + 1`,
        [users[39]],
      );
      await writer.query("COMMIT");
      expect((await adding).status).toBe(204);
    });
    expect(await members(g.id)).toEqual([users[39]]);
    // The writer's mark (its row is the user's, so its trigger stays), then the add's.
    expect((await marks()).map((m) => [m.user_id, (m.trigger.change as { what: string }).what])).toEqual([
      [users[39], "user-created"],
      [users[39], "added-to-group"],
    ]);
  });

  it("a remove whose group another write changed while it waited for the lock still removes the member", async () => {
    const g = (await h.post("/Groups", { displayName: "Raced" })).body;
    await asWriter(async (racer) => {
      // Another writer (as the transaction path does) holds the group and adds the member...
      await racer.query("BEGIN");
      await racer.query(`UPDATE idp_groups SET version = version + 1 WHERE id = $1`, [g.id]);
      await racer.query(`INSERT INTO idp_group_members (group_id, user_id) VALUES ($1, $2)`, [g.id, users[36]]);
      // ...while the remove starts (its snapshot cannot see that member) and waits for the lock.
      const removal = h.patch(`/Groups/${g.id}`, memberOp("remove", [users[36]!])).then((r) => r);
      await waitingForLock("the remove waiting for the group's lock", "UPDATE idp_groups");
      await racer.query("COMMIT");
      expect((await removal).status).toBe(204);
    });
    expect(await members(g.id)).toEqual([]);
    expect(await version(g.id)).toBe('W/"3"');
    expect((await marks()).map((m) => [m.user_id, (m.trigger.change as { what: string }).what])).toEqual([
      [users[36], "removed-from-group"],
    ]);
  });
});
