import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { idp, startStack, waitForQueueIdle, type Stack } from "../support/stack.js";
import { signInLocally } from "../support/adminHarness.js";

/**
 * The reconciliation log says what happened in words ("added to group Marketing"), with the
 * group's name as it was when the IdP made the change, and the ids on the entry's own page.
 */

describe("reconciliation log triggers, end to end over HTTP", () => {
  let stack: Stack;
  let agent: request.Agent;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    stack = await startStack();
    const scim = idp(stack);
    ids.ann = await scim.createUser("ann@example.com");
    ids.bob = await scim.createUser("bob@example.com");
    ids.dan = await scim.createUser("dan@example.com");
    ids.eve = await scim.createUser("eve@example.com");
    ids.marketing = await scim.createGroup("Marketing", [ids.ann]);
    ids.admins = await scim.createGroup("Platform Admins", [ids.dan, ids.eve]);
    await waitForQueueIdle(stack);
    agent = request.agent(stack.service.url);
    await signInLocally(agent);
  });
  afterAll(async () => stack?.close());

  /** The log page's rows for one user, as text. */
  const logText = async (userName: string) => {
    const res = await agent.get(`/admin/log?user=${encodeURIComponent(userName)}`);
    expect(res.status).toBe(200);
    return res.text;
  };
  const latestEntryId = async (userName: string) => {
    const rows: { id: string }[] = await stack.service.db.query(
      `SELECT id FROM reconcile_log WHERE user_name = $1 ORDER BY id DESC LIMIT 1`,
      [userName],
    );
    return rows[0]!.id;
  };

  it("a membership PATCH shows as 'added to group Marketing', and keeps that name after the group is renamed", async () => {
    const scim = idp(stack);
    await scim.patch(`/Groups/${ids.marketing}`, [{ op: "add", path: "members", value: [{ value: ids.bob }] }]);
    await waitForQueueIdle(stack);
    expect(await logText("bob@example.com")).toContain("added to group Marketing");
    const added = await latestEntryId("bob@example.com");

    await scim.patch(`/Groups/${ids.marketing}`, [{ op: "replace", path: "displayName", value: "Growth" }]);
    await waitForQueueIdle(stack);
    const text = await logText("bob@example.com");
    expect(text).toContain("group Marketing renamed to Growth");
    expect(text).toContain("added to group Marketing");
    expect(text).not.toContain("IdP PATCH");

    const entry = await agent.get(`/admin/log/${added}`);
    expect(entry.text).toContain("added to group Marketing");
    expect(entry.text).toContain(`Marketing (${ids.marketing})`);
    expect(entry.text).toContain(`PATCH /scim/v2/Groups/${ids.marketing}`);
  });

  it("a removal and a deactivation read as such", async () => {
    const scim = idp(stack);
    await scim.patch(`/Groups/${ids.admins}`, [{ op: "remove", path: `members[value eq "${ids.dan}"]` }]);
    await waitForQueueIdle(stack);
    expect(await logText("dan@example.com")).toContain("removed from group Platform Admins");
    await scim.patch(`/Users/${ids.eve}`, [{ op: "replace", value: { active: false } }]);
    await waitForQueueIdle(stack);
    expect(await logText("eve@example.com")).toContain("deactivated in the IdP");
  });
});
