import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OAuthClients } from "../../src/auth/oauth/clients.js";
import { ManualClock } from "../../src/clock.js";
import { OAuthRepository } from "../../src/db/auth/oauthRepository.js";
import { startHttpReceiver, type HttpReceiver } from "../support/receivers.js";
import { startStack, type Stack } from "../support/stack.js";

/**
 * credential.expiring: an OAuth client secret with an expiry is announced through the alert
 * channels 14 days and 1 day before it ends, once per secret per threshold, as the injectable
 * clock moves (no waiting); secrets without an expiry, and revoked ones, are never announced.
 */
describe("credential.expiring", () => {
  let stack: Stack;
  let receiver: HttpReceiver;
  const clock = new ManualClock();
  const DAY = 86_400_000;

  beforeAll(async () => {
    receiver = await startHttpReceiver();
    stack = await startStack({
      clock,
      workers: false,
      env: { NOTIFY_WEBHOOK_URL: `${receiver.url}/webhook`, IDP_SILENCE_HOURS: "0" },
    });
  });
  afterAll(async () => {
    await stack?.close();
    await receiver?.close();
  });

  const flush = async () => {
    while ((await stack.service.notifications.deliverer.cycle()) > 0);
  };
  const step = async (ms: number) => {
    clock.advance(ms);
    await flush();
  };

  it("warns 14 days and 1 day before a client secret expires, once each", async () => {
    const clients = new OAuthClients(new OAuthRepository(stack.database.db), clock);
    const expiring = await clients.create("entra-client", 20);
    await clients.create("forever");
    const revoked = await clients.create("gone", 15);
    await clients.revokeSecret(revoked.secretId);

    await step(61_000);
    expect(receiver.ofEvent("credential.expiring")).toEqual([]);

    await step(6 * DAY + 60_000); // 14 days less a minute left
    await step(5 * 60_000); // checked again: no second message
    const fourteen = receiver.ofEvent("credential.expiring");
    expect(fourteen).toHaveLength(1);
    expect(fourteen[0]!.json.details).toMatchObject({
      client: "entra-client",
      secretId: expiring.secretId,
      threshold: "14d",
      kind: "client secret",
    });
    expect(JSON.stringify(fourteen[0]!.json)).not.toContain(expiring.secret);

    await step(12 * DAY); // under 2 days left: still only the 14-day message
    expect(receiver.ofEvent("credential.expiring")).toHaveLength(1);
    await step(DAY); // under 1 day left
    await step(60 * 60_000);
    const all = receiver.ofEvent("credential.expiring");
    expect(all.map((m) => (m.json.details as { threshold: string }).threshold)).toEqual(["14d", "1d"]);
    expect(all.every((m) => (m.json.details as { client: string }).client === "entra-client")).toBe(true);

    await step(2 * DAY); // expired: nothing more
    expect(receiver.ofEvent("credential.expiring")).toHaveLength(2);
  });
});
