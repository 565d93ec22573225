import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signInLocally } from "../support/adminHarness.js";
import { captureLogs } from "../support/logCapture.js";
import { eventually } from "../support/wait.js";
import { adminApi, emulatorState, idp, startStack, type Stack } from "../support/stack.js";

/**
 * The platform's own figure beside the budget (issue 47, item 9): its current OpenAPI description
 * says 20,000 SCIM requests a day, older pages 5,000. The emulator announces its limit in
 * X-RateLimit-Limit; the connector shows it on the overview, /admin/api/budget and /metrics, warns
 * once, and keeps spending PLATFORM_SCIM_DAILY_BUDGET.
 */
describe("the SCIM limit the platform announces", () => {
  let stack: Stack;
  let logs: Record<string, unknown>[];

  beforeAll(async () => {
    logs = await captureLogs(async () => {
      stack = await startStack({ emulator: { scimDailyLimit: 20_000 } });
      const scim = idp(stack);
      const ann = await scim.createUser("ann@example.com");
      await scim.createGroup("Marketing", [ann]);
      const bob = await scim.createUser("bob@example.com");
      await scim.patch(`/Groups/${await scim.createGroup("Platform Admins")}`, [
        { op: "add", path: "members", value: [{ value: bob }] },
      ]);
      await eventually("both accounts are on the platform", async () => {
        const state = await emulatorState(stack);
        return state.dashboardUsers.length === 2;
      });
      await eventually("the announced limit is recorded", async () => {
        const res = await adminApi(stack)("/budget");
        return (res.body as { platformAnnounced: unknown }).platformAnnounced !== null;
      });
    });
  }, 120_000);
  afterAll(() => stack?.close());

  it("is shown beside the budget, which stays as set", async () => {
    const res = await adminApi(stack)("/budget");
    expect(res.body).toMatchObject({ limit: 5000, platformAnnounced: { limit: 20_000, header: "x-ratelimit-limit" } });
    const metrics = await request(stack.service.url).get("/metrics");
    expect(metrics.text).toMatch(/^scim_connector_platform_scim_announced_limit_calls 20000$/m);
    expect(metrics.text).toMatch(/^scim_connector_budget_limit_calls 5000$/m);

    const agent = request.agent(stack.service.url);
    await signInLocally(agent);
    const overview = await agent.get("/admin/");
    expect(overview.text).toContain("The platform announces 20,000 calls a day; the connector spends 5,000");
  });

  it("is warned about once, however many answers announce it", () => {
    const warnings = logs.filter((record) => String(record.message).startsWith("the platform announces a SCIM limit"));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ announced: 20_000, budget: 5000, setting: "PLATFORM_SCIM_DAILY_BUDGET" });
  });
});
