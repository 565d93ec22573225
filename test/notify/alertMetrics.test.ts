import { readFile } from "node:fs/promises";
import path from "node:path";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { startStack, type Stack } from "../support/stack.js";

/**
 * The alert rules follow the settings and clear: ScimConnectorIdpSilent compares with
 * IDP_SILENCE_HOURS as the connector exports it, and ScimConnectorNotificationsParked reads a
 * gauge that drops back to 0 once a later delivery to the channel is sent (the parked rows
 * themselves stay until the 90-day prune, so a count of them never clears).
 */

const RULES = path.resolve(import.meta.dirname, "../../docs/alerts/scim-connector.rules.yml");
type Rule = { alert: string; expr: string };

describe("alert rules that follow the settings and clear", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ workers: false, env: { IDP_SILENCE_HOURS: "6" } });
  });
  afterAll(async () => stack?.close());

  const metrics = async () => (await request(stack.service.url).get("/metrics")).text;
  const rule = async (name: string) => {
    const { groups } = parse(await readFile(RULES, "utf8")) as { groups: { rules: Rule[] }[] };
    return groups.flatMap((g) => g.rules).find((r) => r.alert === name)!;
  };

  /** A message to `channel`, its delivery settled in `state`. */
  async function delivery(channel: string, state: "sent" | "parked"): Promise<void> {
    await stack.database.db.transaction(async (tx) => {
      const [incident] = await tx.query<{ id: string }>(
        `INSERT INTO notification_incidents (key, event, opened_at) VALUES ($1, 'test', now()) RETURNING id`,
        [`test:${Math.random()}`],
      );
      const [outbox] = await tx.query<{ id: string }>(
        `INSERT INTO notification_outbox (incident_id, event, occurred_at, summary, fanned_out) VALUES ($1, 'test', now(), 'a test', true) RETURNING id`,
        [incident!.id],
      );
      await tx.query(
        `INSERT INTO notification_deliveries (outbox_id, channel, state, attempts, next_attempt_at, last_error)
         VALUES ($1, $2, $3, 8, now(), CASE WHEN $3 = 'parked' THEN 'HTTP 500' END)`,
        [outbox!.id, channel, state],
      );
    });
  }

  it("ScimConnectorIdpSilent's threshold is IDP_SILENCE_HOURS, exported, not a fixed 24 hours", async () => {
    expect(await metrics()).toMatch(/^scim_connector_idp_silence_threshold_seconds 21600$/m);
    const { expr } = await rule("ScimConnectorIdpSilent");
    expect(expr).toContain("scim_connector_idp_silence_threshold_seconds");
    expect(expr).not.toMatch(/\d+ \* 3600/);
  });

  it("ScimConnectorNotificationsParked fires while a channel's latest delivery is parked and clears when one is sent", async () => {
    const { expr } = await rule("ScimConnectorNotificationsParked");
    expect(expr).toBe("max by (channel) (scim_connector_notification_channel_failing) == 1");

    await delivery("webhook", "sent");
    await delivery("webhook", "parked");
    await delivery("slack", "sent");
    let text = await metrics();
    expect(text).toMatch(/^scim_connector_notification_channel_failing\{channel="webhook"\} 1$/m);
    expect(text).toMatch(/^scim_connector_notification_channel_failing\{channel="slack"\} 0$/m);

    await delivery("webhook", "sent"); // the test notification, delivered once the channel is fixed
    text = await metrics();
    expect(text).toMatch(/^scim_connector_notification_channel_failing\{channel="webhook"\} 0$/m);
    // The parked row is still there: the old rule's count would still fire.
    expect(text).toMatch(/^scim_connector_notification_deliveries\{channel="webhook",state="parked"\} 1$/m);
  });
});
