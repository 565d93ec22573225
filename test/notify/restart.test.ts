import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { notify } from "../../src/notify/events.js";
import { spawnConnector, type ConnectorProcess } from "../support/connectorProcess.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";
import { startHttpReceiver, type HttpReceiver } from "../support/receivers.js";
import { ADMIN_TOKEN, IDP_TOKEN, writeMappingFile } from "../support/stack.js";

/**
 * The connector (a child process) SIGKILLed while the receiver holds its request: the message
 * was committed, the send had started, no "sent" row was written. After the restart (once the
 * dead sender's lease lapses) it is delivered and acknowledged exactly once; a message
 * committed while the connector was down is delivered once too.
 */
describe("notifications through a SIGKILL", () => {
  let database: TestDatabase;
  let receiver: HttpReceiver;
  let env: Record<string, string>;
  let connector: ConnectorProcess | undefined;

  beforeAll(async () => {
    database = await createTestDatabase();
    receiver = await startHttpReceiver();
    const mappingFile = await writeMappingFile();
    env = {
      DATABASE_URL: database.url,
      SCIM_TOKEN: IDP_TOKEN,
      ADMIN_TOKEN,
      MAPPING_FILE: mappingFile,
      RESYNC_CRON: "off",
      NOTIFY_WEBHOOK_URL: `${receiver.url}/webhook`,
      // A killed sender's claim lapses after this; short so the test is short.
      NOTIFY_LEASE_MS: "2000",
    };
  });
  afterAll(async () => {
    await connector?.kill("SIGKILL");
    await receiver?.close();
    await database?.drop();
  });

  const deliveries = async (incidentId: string) =>
    (await database.db.query(
      `SELECT d.state, d.attempts FROM notification_deliveries d JOIN notification_outbox o ON o.id = d.outbox_id WHERE o.incident_id = $1`,
      [incidentId],
    )) as { state: string; attempts: number }[];

  it("a message whose sender was killed mid-send, and one committed while down, are each acknowledged once after the restart", async () => {
    receiver.script("hold");
    connector = await spawnConnector(env);
    const { incidentId: first } = await notify(database.db, {
      key: "test:kill",
      event: "resync.failed",
      occurredAt: new Date(),
      summary: "sent while killed",
      details: {},
    });
    await vi.waitFor(() => expect(receiver.held).toHaveLength(1), { timeout: 20_000, interval: 50 });
    await connector.kill("SIGKILL");
    receiver.held[0]!.res.destroy();
    expect(await deliveries(first)).toEqual([{ state: "pending", attempts: 1 }]);

    const { incidentId: second } = await notify(database.db, {
      key: "test:down",
      event: "drift.found",
      occurredAt: new Date(),
      summary: "committed while down",
      details: {},
    });
    connector = await spawnConnector(env);
    await vi.waitFor(
      async () => {
        expect(await deliveries(first)).toEqual([{ state: "sent", attempts: 2 }]);
        expect(await deliveries(second)).toEqual([{ state: "sent", attempts: 1 }]);
      },
      { timeout: 30_000, interval: 100 },
    );
    // Acknowledged (answered 2xx) exactly once each; the held copy of the first got no answer.
    expect(receiver.received.filter((r) => r.json?.id === first).map((r) => r.status)).toEqual([200]);
    expect(receiver.received.filter((r) => r.json?.id === second).map((r) => r.status)).toEqual([200]);
    expect(receiver.held[0]!.request.json.id).toBe(first);
  });
});
