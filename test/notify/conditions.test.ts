import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/clock.js";
import { conditionChecks, readCertificate } from "../../src/notify/conditions.js";
import { makeIdpKeys } from "../support/saml.js";
import { ADMIN_TOKEN, idp, startStack, type Stack } from "../support/stack.js";
import { startHttpReceiver, startSmtpReceiver, type HttpReceiver, type SmtpReceiver } from "../support/receivers.js";
import { eventually } from "../support/wait.js";
import request from "supertest";

/**
 * Conditions found by looking (idp.silent) fire when the injectable clock moves past the
 * threshold, not by waiting; email goes through a real SMTP server (smtp-server) on loopback.
 */
describe("idp.silent and the email channel", () => {
  let stack: Stack;
  let receiver: HttpReceiver;
  let smtp: SmtpReceiver;
  const clock = new ManualClock();

  beforeAll(async () => {
    receiver = await startHttpReceiver();
    smtp = await startSmtpReceiver();
    stack = await startStack({
      clock,
      workers: false,
      env: {
        IDP_SILENCE_HOURS: "24",
        NOTIFY_WEBHOOK_URL: `${receiver.url}/webhook`,
        SMTP_URL: `smtp://notify:smtp-password-123@${new URL(smtp.url).host}`,
        NOTIFY_EMAIL_TO: "identity-team@example.com",
        NOTIFY_EMAIL_FROM: "scim-connector@example.com",
        PUBLIC_URL: "https://scim.example.com",
      },
    });
  });
  afterAll(async () => {
    await stack?.close();
    await receiver?.close();
    await smtp?.close();
  });

  const flush = async () => {
    while ((await stack.service.notifications.deliverer.cycle()) > 0);
  };
  const lastSeen = async () =>
    ((await stack.database.db.query(`SELECT last_request_at FROM idp_activity`)) as { last_request_at: Date }[])[0];

  it("fires idp.silent once the clock passes IDP_SILENCE_HOURS without a SCIM request, and says when the IdP is back", async () => {
    await idp(stack).send("get", "/Users").expect(200);
    await eventually("the IdP activity row", async () => (await lastSeen()) !== undefined, { intervalMs: 20 });
    await flush();
    clock.advance(23 * 3_600_000);
    await flush();
    expect(receiver.ofEvent("idp.silent")).toEqual([]);

    clock.advance(2 * 3_600_000);
    await flush();
    clock.advance(5 * 60_000); // checked again: still one incident
    await flush();
    const [silent, ...more] = receiver.ofEvent("idp.silent");
    expect(more).toEqual([]);
    expect(silent!.json.details).toMatchObject({ silenceHours: 24 });
    expect(smtp.mails.filter((m) => m.raw.includes("X-Notification-Event: idp.silent\r\n"))).toHaveLength(1);

    await idp(stack).send("get", "/Users").expect(200);
    await eventually(
      "the new IdP request recorded",
      async () => (await lastSeen())!.last_request_at.getTime() >= clock.now().getTime() - 1000,
      { intervalMs: 20 },
    );
    clock.advance(61_000);
    await flush();
    const [back] = receiver.ofEvent("idp.silent.ended");
    expect(back!.json.id).toBe(silent!.json.id);
  });

  it("sends email through SMTP with a stable Message-ID and the link", async () => {
    const found = smtp.mails.find((m) => m.raw.includes("X-Notification-Event: idp.silent\r\n"))!;
    // Unfold headers (RFC 5322) and undo quoted-printable soft breaks, as a mail client would.
    const mail = { ...found, raw: found.raw.replace(/\r\n[ \t]+/g, " ").replace(/=\r\n/g, "") };
    expect(mail.from).toBe("scim-connector@example.com");
    expect(mail.to).toEqual(["identity-team@example.com"]);
    expect(mail.raw).toMatch(/^Subject: \[scim-connector\] Action needed: idp\.silent/m);
    expect(mail.raw).toMatch(/^Message-ID: +<[0-9a-f-]{36}\.idp\.silent@scim-connector>/m);
    expect(mail.raw).toContain("https://scim.example.com/admin");
  });

  it("the admin API queues a test notification for one channel only; an unknown channel is 404", async () => {
    const before = smtp.mails.length;
    const webhooksBefore = receiver.received.length;
    const res = await request(stack.service.url)
      .post("/admin/api/notifications/test/email")
      .set("Authorization", `Bearer ${ADMIN_TOKEN}`);
    expect(res.status).toBe(202);
    await flush();
    expect(smtp.mails.length).toBe(before + 1);
    expect(smtp.mails.at(-1)!.raw).toContain("X-Notification-Event: notification.test");
    expect(receiver.received.length).toBe(webhooksBefore);
    const unknown = await request(stack.service.url)
      .post("/admin/api/notifications/test/pager")
      .set("Authorization", `Bearer ${ADMIN_TOKEN}`);
    expect(unknown.status).toBe(404);
    const status = await request(stack.service.url)
      .get("/admin/api/notifications")
      .set("Authorization", `Bearer ${ADMIN_TOKEN}`);
    expect(status.body.channels).toEqual([
      { name: "webhook", target: new URL(receiver.url).host },
      { name: "email", target: `${new URL(smtp.url).host} → identity-team@example.com` },
    ]);
    expect(status.text).not.toContain("smtp-password-123");
  });

  it("saml.certificate.expiring fires once for a certificate within 30 days of its end (PEM or bare base64)", async () => {
    const { cert } = makeIdpKeys("expiring-idp"); // valid for 2 days
    const bare = cert.replace(/-----[A-Z ]+-----/g, "").replace(/\s+/g, "");
    expect(readCertificate(bare)?.fingerprint).toBe(readCertificate(cert)?.fingerprint);
    expect(readCertificate("not a certificate")).toBeUndefined();
    const checks = conditionChecks({ db: stack.database.db, idpSilenceHours: 0, samlIdpCert: cert });
    await checks.run(clock.now());
    await checks.run(clock.now());
    await flush();
    const [expiring, ...more] = receiver.ofEvent("saml.certificate.expiring");
    expect(more).toEqual([]);
    expect(expiring!.json.details).toMatchObject({ subject: "CN=expiring-idp", daysLeft: expect.any(Number) });
    // 40 days before the end: nothing yet.
    const far = conditionChecks({
      db: stack.database.db,
      idpSilenceHours: 0,
      samlIdpCert: makeIdpKeys("far-idp").cert,
    });
    await far.run(new Date(clock.now().getTime() - 40 * 86_400_000));
    await flush();
    expect(receiver.ofEvent("saml.certificate.expiring")).toHaveLength(1);
  });
});
