import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signInLocally } from "../support/adminHarness.js";
import { eventually } from "../support/wait.js";
import { emulatorState, idp, startStack, waitForQueueIdle, type Stack } from "../support/stack.js";

/**
 * A deactivated user's account is stripped and kept until the grace ends: the admin pages say so
 * (issue 47, item 8). The user page's diff showed "− userName", "− givenName", which read as her
 * identity being erased; the Users list said "on the platform · queued".
 */
describe("the admin pages on a stripped account", () => {
  let stack: Stack;
  let agent: request.Agent;
  let annId: string;

  beforeAll(async () => {
    stack = await startStack({ env: { RECONCILE_DEPROVISION_GRACE_MS: "86400000" } });
    const scim = idp(stack);
    annId = await scim.createUser("ann@example.com");
    await scim.createGroup("Marketing", [annId]);
    await eventually("ann's account is on the platform", async () =>
      (await emulatorState(stack)).dashboardUsers.some((u) => u.userName === "ann@example.com"),
    );
    await scim.patch(`/Users/${annId}`, [{ op: "replace", value: { active: false } }]);
    await eventually("ann's account is stripped", async () => {
      const rows = await stack.service.db.query<{ stripped: boolean }>(
        `SELECT stripped_at IS NOT NULL AS stripped FROM platform_accounts WHERE user_id = $1`,
        [annId],
      );
      return rows[0]?.stripped;
    });
    await waitForQueueIdle(stack.service.db);
    agent = request.agent(stack.service.url);
    await signInLocally(agent);
  }, 120_000);
  afterAll(() => stack?.close());

  it("the Users list says the account waits to be deleted, and when", async () => {
    const list = await agent.get("/admin/users");
    expect(list.text).toMatch(/access removed · waiting to be deleted \(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\)/);
    expect(list.text).not.toContain("on the platform · queued");
  });

  it("the user page says what was removed and what stays, and removes nothing of her identity", async () => {
    const page = await agent.get(`/admin/users/${annId}`);
    expect(page.text).toContain("every permission (company,");
    expect(page.text).toContain("Stays: the account and its profile");
    expect(page.text).not.toMatch(/<tr class="diff-removed">/);
  });
});
