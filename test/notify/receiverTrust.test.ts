import { createHmac, timingSafeEqual } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnConnector, type ConnectorProcess } from "../support/connectorProcess.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";
import { startHttpReceiver, type HttpReceiver } from "../support/receivers.js";
import { ADMIN_TOKEN, IDP_TOKEN, writeMappingFile } from "../support/stack.js";
import { eventually } from "../support/wait.js";

/**
 * What a webhook receiver can rely on, against the connector as a real child process and a real
 * receiver on loopback: a signature a captured request cannot be replayed with (the check
 * docs/operations.md tells receivers to apply, written here from that text), and a receiver that
 * answers with an absurd Retry-After gets its delivery parked with that error, not resent forever.
 */

const SECRET = "receiver-trust-secret-0123456789";
/** The tolerance docs/operations.md recommends. */
const TOLERANCE_SECONDS = 300;

/** The documented receiver check: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, t within the tolerance. */
function receiverAccepts(header: unknown, rawBody: string, nowSeconds: number): boolean {
  const fields = new Map(
    String(header)
      .split(",")
      .map((part) => part.split("=", 2) as [string, string]),
  );
  const t = Number(fields.get("t"));
  const v1 = fields.get("v1") ?? "";
  if (!Number.isInteger(t) || Math.abs(nowSeconds - t) > TOLERANCE_SECONDS) return false;
  const expected = createHmac("sha256", SECRET).update(`${t}.${rawBody}`).digest();
  const given = Buffer.from(v1, "hex");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

describe("a webhook receiver can trust what it gets", () => {
  let database: TestDatabase;
  let connector: ConnectorProcess | undefined;
  let receiver: HttpReceiver;

  beforeAll(async () => {
    database = await createTestDatabase();
    receiver = await startHttpReceiver();
    const mappingFile = await writeMappingFile();
    connector = await spawnConnector({
      DATABASE_URL: database.url,
      SCIM_TOKEN: IDP_TOKEN,
      ADMIN_TOKEN,
      MAPPING_FILE: mappingFile,
      RESYNC_CRON: "off",
      NOTIFY_WEBHOOK_URL: `${receiver.url}/webhook`,
      NOTIFY_WEBHOOK_SECRET: SECRET,
      NOTIFY_LEASE_MS: "1000",
      NOTIFY_RETRY_BASE_MS: "10",
    });
  }, 90_000);
  afterAll(async () => {
    await connector?.kill("SIGKILL");
    await receiver?.close();
    await database?.drop();
  });

  const sendTest = async () => {
    const res = await fetch(`${connector!.url}/admin/api/notifications/test/webhook`, {
      method: "POST",
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(res.status).toBe(202);
  };

  it("a delivery is signed with its time: the documented check accepts it now and refuses it replayed later or altered", async () => {
    const before = receiver.received.length;
    await sendTest();
    const delivered = await eventually("the signed test notification", async () =>
      receiver.received.slice(before).find((r) => r.status === 200),
    );
    const now = Math.floor(Date.now() / 1000);
    const header = delivered.headers["x-signature"];
    expect(receiverAccepts(header, delivered.raw, now), String(header)).toBe(true);
    // The same captured request, replayed past the tolerance, or with its body changed.
    expect(receiverAccepts(header, delivered.raw, now + TOLERANCE_SECONDS + 60)).toBe(false);
    expect(receiverAccepts(header, delivered.raw.replace("test", "tset"), now)).toBe(false);
  });

  it("a Retry-After beyond any sane wait parks the delivery with that error at once; it is not resent", async () => {
    const before = receiver.arrived;
    receiver.script({ status: 503, headers: { "Retry-After": "99999999999999999999" } });
    await sendTest();
    // Either outcome ends the wait: parked (the fix), or a second arrival (resent every lease).
    const row = await eventually("the delivery parked, or sent again", async () => {
      const [delivery] = await database.db.query<{ state: string; last_error: string | null }>(
        `SELECT d.state, d.last_error FROM notification_deliveries d
           JOIN notification_outbox o ON o.id = d.outbox_id
          ORDER BY o.id DESC LIMIT 1`,
      );
      return delivery?.state === "parked" || receiver.arrived - before >= 2 ? delivery : undefined;
    });
    expect(row?.state, connector!.output().slice(-2000)).toBe("parked");
    expect(row?.last_error).toMatch(/HTTP 503.*Retry-After beyond 24 h/);
    expect(receiver.arrived - before).toBe(1);
  });
});
