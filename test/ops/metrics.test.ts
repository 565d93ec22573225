import express from "express";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { budgetPolicyFromEnv } from "../../src/reconcile/index.js";
import { metricsRouter } from "../../src/http/metrics.js";
import { ServiceMetrics } from "../../src/metrics/index.js";
import { methodLabel, scimRouteTemplate, statusClass } from "../../src/metrics/scimRoutes.js";
import { loadEnv } from "../../src/config/env.js";
import { systemClock } from "../../src/clock.js";
import { IDP_TOKEN, idp, startStack, type Stack } from "../support/stack.js";
import { upsertEmailStates } from "../support/mirror.js";

/** Parses Prometheus text into "name{labels}" → value. */
function series(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const at = line.lastIndexOf(" ");
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

describe("scim route templates", () => {
  it.each([
    ["/Users", "/scim/v2/Users"],
    ["/Users/", "/scim/v2/Users"],
    ["/Users/2819c223-7f76-453a-919d-413861904646", "/scim/v2/Users/:id"],
    ["/users/abc", "/scim/v2/Users/:id"],
    ["/Groups/g-1", "/scim/v2/Groups/:id"],
    ["/Groups", "/scim/v2/Groups"],
    ["/ServiceProviderConfig", "/scim/v2/ServiceProviderConfig"],
    ["/Schemas/urn:ietf:params:scim:schemas:core:2.0:User", "/scim/v2/Schemas/:id"],
    ["/Users/a/b/c", "/scim/v2/other"],
    ["/alice@example.com", "/scim/v2/other"],
  ])("%s → %s", (path, template) => {
    expect(scimRouteTemplate(path)).toBe(template);
  });
  it("status classes and methods stay a small set", () => {
    expect([statusClass(201), statusClass(404), statusClass(503), statusClass(42)]).toEqual([
      "2xx",
      "4xx",
      "5xx",
      "other",
    ]);
    expect([methodLabel("PATCH"), methodLabel("BREW")]).toEqual(["PATCH", "other"]);
  });
});

describe("/metrics", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ workers: false });
  });
  afterAll(async () => {
    await stack?.close();
  });

  const scrape = async () => {
    const res = await request(stack.service.url).get("/metrics");
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^text\/plain/);
    return series(res.text);
  };

  it("reports budget, queue depth by priority, reconcile outcomes, SCIM latency, mirror lag and quarantine state", async () => {
    const client = idp(stack);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await client.createUser(`m${i}@example.com`));
    await client.createGroup("Marketing", ids);
    await request(stack.service.url).get("/scim/v2/Users/does-not-exist").set("Authorization", `Bearer ${IDP_TOKEN}`);
    await request(stack.service.url).get("/scim/v2/Users").set("Authorization", "Bearer wrong");

    const before = await scrape();
    expect(before.get('scim_connector_reconcile_queue_depth{priority="not yet classified"}')).toBe(5);
    expect(before.get("scim_connector_budget_used_calls")).toBe(0);
    expect(before.get("scim_connector_budget_limit_calls")).toBe(5000);
    expect(
      before.get(
        'scim_connector_scim_request_duration_seconds_count{method="POST",route="/scim/v2/Users",status_class="2xx"}',
      ),
    ).toBe(5);
    expect(
      before.get(
        'scim_connector_scim_request_duration_seconds_count{method="GET",route="/scim/v2/Users/:id",status_class="4xx"}',
      ),
    ).toBe(1);
    expect(
      before.get(
        'scim_connector_scim_request_duration_seconds_count{method="GET",route="/scim/v2/Users",status_class="4xx"}',
      ),
    ).toBe(1);
    expect(before.get('scim_connector_platform_quarantined{family="scim"}')).toBe(0);
    expect([...before.keys()].some((k) => k.startsWith("scim_connector_mirror_oldest_pending_seconds{table="))).toBe(
      true,
    );
    expect(before.get("scim_connector_metrics_database_up")).toBe(1);

    const worker = stack.service.reconciliation!.worker;
    while (await worker.runOnce()) {
      /* drain */
    }
    const after = await scrape();
    expect(after.get('scim_connector_reconcile_outcomes_total{action="create",outcome="succeeded"}')).toBe(5);
    expect(after.get("scim_connector_budget_used_calls")).toBe(5);
    expect(after.get('scim_connector_budget_remaining_calls{kind="ordinary"}')).toBe(4500 - 5);
    expect(after.get('scim_connector_budget_remaining_calls{kind="with_reserve"}')).toBe(5000 - 5);
    expect([...after.keys()].some((k) => k.startsWith("scim_connector_reconcile_queue_depth"))).toBe(false);
  });

  it("serves the mirror worker's counters and the parked backlog by kind from the service's own registry", async () => {
    await upsertEmailStates(stack.service.db, [
      ["metrics@example.com", "subscribed"],
      ["metrics2@example.com", "unsubscribed"],
    ]);
    expect(await stack.service.mirror!.drain()).toMatchObject({ pushed: 2, parked: 0 });
    const after = await scrape();
    expect(after.get('scim_connector_mirror_changes_pushed_total{kind="email"}')).toBe(2);
    expect(after.get('scim_connector_mirror_parked_changes{kind="email"}')).toBe(0);
    expect(after.get('scim_connector_mirror_pending_rows{table="mirror.email_subscription_states"}')).toBe(0);
  });

  it("counts a parked mirror row in the parked gauge, and drops it once the row is gone", async () => {
    // A row the platform refuses (the table's check dropped, as an ETL might): the sync parks it.
    await stack.service.db.query(
      `ALTER TABLE mirror.email_subscription_states DROP CONSTRAINT email_subscription_states_email_format`,
    );
    try {
      await upsertEmailStates(stack.service.db, [
        ["not-an-email", "subscribed"],
        ["metrics3@example.com", "subscribed"],
      ]);
      expect(await stack.service.mirror!.drain()).toMatchObject({ pushed: 1, parked: 1 });
      const parked = await scrape();
      expect(parked.get('scim_connector_mirror_parked_changes{kind="email"}')).toBe(1);
      expect(parked.get('scim_connector_mirror_changes_pushed_total{kind="email"}')).toBe(3);
    } finally {
      await stack.service.db.query(`DELETE FROM mirror.email_subscription_states WHERE email = 'not-an-email'`);
      await stack.service.db.query(`DELETE FROM mirror_sync.pending WHERE key = 'not-an-email'`);
      await stack.service.db.query(
        `ALTER TABLE mirror.email_subscription_states ADD CONSTRAINT email_subscription_states_email_format CHECK (email ~ '^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$' AND length(email) <= 255)`,
      );
    }
    expect((await scrape()).get('scim_connector_mirror_parked_changes{kind="email"}')).toBe(0);
  });

  it("lets no one in: loopback only without METRICS_TOKEN (never through a proxy), the bearer token when set", async () => {
    for (const [header, value] of [
      ["X-Forwarded-For", "203.0.113.9"],
      ["Forwarded", "for=203.0.113.9"],
      ["X-Real-IP", "203.0.113.9"],
    ] as const) {
      const proxied = await request(stack.service.url).get("/metrics").set(header, value);
      expect([header, proxied.status]).toEqual([header, 403]);
    }

    // A second service's metrics in the same process: registries are per service.
    const env = loadEnv({ METRICS_TOKEN: "metrics-token-0123456789" });
    const metrics = new ServiceMetrics({
      db: stack.database.db,
      clock: systemClock,
      budget: budgetPolicyFromEnv(env),
      quarantine: stack.service.quarantine,
    });
    const app = express().use(metricsRouter(metrics, env.METRICS_TOKEN));
    expect((await request(app).get("/metrics")).status).toBe(401);
    expect((await request(app).get("/metrics").set("Authorization", "Bearer metrics-token-wrong")).status).toBe(401);
    const ok = await request(app).get("/metrics").set("Authorization", "Bearer metrics-token-0123456789");
    expect(ok.status).toBe(200);
    expect(ok.text).toContain("scim_connector_budget_used_calls 5");
  });
});
