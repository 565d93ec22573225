import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startClient, type Client } from "./harness.js";

type User = {
  platform_id: string;
  external_id: string | null;
  user_aliases: Array<{ alias_name: string; alias_label: string }>;
};

describe("/users/alias/new, /users/alias/update, /users/delete", () => {
  let c: Client;
  beforeAll(async () => {
    c = await startClient();
  });
  afterAll(() => c.close());
  beforeEach(async () => {
    await c.control("POST", "/reset");
    await c.rest("POST", "/users/track", {
      attributes: [{ external_id: "u1" }, { external_id: "u2" }, { external_id: "u3" }],
    });
  });
  const users = async (): Promise<User[]> => (await c.control("GET", "/state")).body.users;

  it("alias/new with external_id adds the alias to that user; response aliases_processed and message success", async () => {
    const res = await c.rest("POST", "/users/alias/new", {
      user_aliases: [{ external_id: "u1", alias_name: "a1", alias_label: "crm" }],
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ aliases_processed: 1, message: "success" });
    expect((await users()).find((u) => u.external_id === "u1")!.user_aliases).toEqual([
      { alias_name: "a1", alias_label: "crm" },
    ]);
  });

  it("alias/new with an external_id no user has adds the alias to no user", async () => {
    await c.rest("POST", "/users/alias/new", {
      user_aliases: [{ external_id: "ghost", alias_name: "a1", alias_label: "crm" }],
    });
    const all = await users();
    expect(all).toHaveLength(3);
    expect(all.every((u) => u.user_aliases.length === 0)).toBe(true);
  });

  it("alias/new without external_id creates an alias-only user that /users/track can then update", async () => {
    await c.rest("POST", "/users/alias/new", { user_aliases: [{ alias_name: "anon-1", alias_label: "web" }] });
    const aliasOnly = (await users()).find((u) => u.external_id === null)!;
    expect(aliasOnly.user_aliases).toEqual([{ alias_name: "anon-1", alias_label: "web" }]);
    await c.rest("POST", "/users/track", {
      events: [{ user_alias: { alias_name: "anon-1", alias_label: "web" }, name: "e", time: "2026-01-01T00:00:00Z" }],
    });
    expect((await c.control("GET", "/state")).body.users.find((u: User) => u.external_id === null).event_count).toBe(1);
  });

  it("alias/new: user_aliases required, up to 50, alias_name and alias_label required", async () => {
    const many = (n: number) => Array.from({ length: n }, (_, i) => ({ alias_name: `n${i}`, alias_label: "l" }));
    expect((await c.rest("POST", "/users/alias/new", { user_aliases: many(50) })).status).toBe(201);
    const over = await c.rest("POST", "/users/alias/new", { user_aliases: many(51) });
    expect(over.status).toBe(400);
    expect(over.body.message).toContain("50");
    expect((await c.rest("POST", "/users/alias/new", {})).status).toBe(400);
    expect((await c.rest("POST", "/users/alias/new", { user_aliases: [{ alias_name: "x" }] })).status).toBe(400);
  });

  it("alias/update renames old_alias_name to new_alias_name for the label", async () => {
    await c.rest("POST", "/users/alias/new", {
      user_aliases: [{ external_id: "u2", alias_name: "old", alias_label: "crm" }],
    });
    const res = await c.rest("POST", "/users/alias/update", {
      alias_updates: [{ alias_label: "crm", old_alias_name: "old", new_alias_name: "new" }],
    });
    expect(res.status).toBe(201);
    expect((await users()).find((u) => u.external_id === "u2")!.user_aliases).toEqual([
      { alias_name: "new", alias_label: "crm" },
    ]);
  });

  it("alias/update: when no alias has that label and old name, nothing is updated", async () => {
    await c.rest("POST", "/users/alias/new", {
      user_aliases: [{ external_id: "u2", alias_name: "old", alias_label: "crm" }],
    });
    await c.rest("POST", "/users/alias/update", {
      alias_updates: [{ alias_label: "other", old_alias_name: "old", new_alias_name: "new" }],
    });
    expect((await users()).find((u) => u.external_id === "u2")!.user_aliases).toEqual([
      { alias_name: "old", alias_label: "crm" },
    ]);
  });

  it("alias/update: alias_updates required, up to 50, all three fields required", async () => {
    const many = Array.from({ length: 51 }, () => ({ alias_label: "l", old_alias_name: "a", new_alias_name: "b" }));
    expect((await c.rest("POST", "/users/alias/update", { alias_updates: many })).status).toBe(400);
    expect(
      (await c.rest("POST", "/users/alias/update", { alias_updates: [{ alias_label: "l", old_alias_name: "a" }] }))
        .status,
    ).toBe(400);
  });

  it("delete by external_ids removes the profiles; deleted counts the ids queued", async () => {
    const res = await c.rest("POST", "/users/delete", { external_ids: ["u1", "u2"] });
    expect(res.status).toBe(202);
    expect(res.body.deleted).toBe(2);
    expect((await users()).map((u) => u.external_id)).toEqual(["u3"]);
  });

  it("delete by platform_ids and by user_aliases", async () => {
    await c.rest("POST", "/users/alias/new", {
      user_aliases: [{ external_id: "u1", alias_name: "a", alias_label: "crm" }],
    });
    const u2 = (await users()).find((u) => u.external_id === "u2")!;
    await c.rest("POST", "/users/delete", { platform_ids: [u2.platform_id] });
    await c.rest("POST", "/users/delete", { user_aliases: [{ alias_name: "a", alias_label: "crm" }] });
    expect((await users()).map((u) => u.external_id)).toEqual(["u3"]);
  });

  it("delete: at most 50 identifiers per request", async () => {
    const many = Array.from({ length: 51 }, (_, i) => `x${i}`);
    expect((await c.rest("POST", "/users/delete", { external_ids: many })).status).toBe(400);
    expect((await c.rest("POST", "/users/delete", { external_ids: many.slice(0, 50) })).status).toBe(202);
  });

  it("delete (not shown): more than one kind of identifier in a request is a 400 and deletes nothing", async () => {
    const u2 = (await users()).find((u) => u.external_id === "u2")!;
    const res = await c.rest("POST", "/users/delete", { external_ids: ["u1"], platform_ids: [u2.platform_id] });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain("only one");
    expect(await users()).toHaveLength(3);
  });

  it("delete: a request with no identifiers is a 400", async () => {
    expect((await c.rest("POST", "/users/delete", {})).status).toBe(400);
  });
});
