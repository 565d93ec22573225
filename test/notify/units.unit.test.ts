import { describe, expect, it } from "vitest";
import { ConfigError, loadEnv } from "../../src/config/env.js";
import { scrub } from "../../src/logging/logger.js";
import { channelsFromEnv, retryAfterMs, signatureOf } from "../../src/notify/channels.js";
import {
  emailContent,
  slackBody,
  teamsBody,
  webhookBody,
  type NotificationMessage,
} from "../../src/notify/messages.js";

const message: NotificationMessage = {
  event: "quarantine.started",
  id: "6f1c1f0e-4a8e-4d7e-9d59-0c1f5f1b2a3c",
  occurredAt: "2026-11-24T03:00:00.000Z",
  summary: "Platform family scim quarantined: 5 consecutive calls refused with 401/403",
  details: { family: "scim", reason: "auth", lastStatus: 401, nothing: null },
  url: "https://scim.example.com/admin",
};

/** A problem given as text must be that text; as a pattern, match it. */
const problemMatcher = (p: string | RegExp) => (typeof p === "string" ? p : expect.stringMatching(p));

describe("notification channels from the environment", () => {
  const channels = (env: Record<string, string>) => channelsFromEnv(loadEnv(env));

  it.each([
    [
      { NOTIFY_WEBHOOK_SECRET: "0123456789abcdef0123" },
      ["NOTIFY_WEBHOOK_SECRET: set NOTIFY_WEBHOOK_URL too, or remove the secret"],
    ],
    [
      { SMTP_URL: "smtp://mail.example.com:587" },
      [/^NOTIFY_EMAIL_TO: required for email/, /^NOTIFY_EMAIL_FROM: required for email/],
    ],
    [{ NOTIFY_EMAIL_TO: "a@example.com", NOTIFY_EMAIL_FROM: "b@example.com" }, [/^SMTP_URL: required for email/]],
  ])("a half-configured channel stops the boot with the fix: %j", (env, problems) => {
    const error = (() => {
      try {
        channels(env);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual(problems.map(problemMatcher));
  });

  it("a bad webhook URL is reported without echoing it (it carries a token)", () => {
    expect(() => loadEnv({ NOTIFY_SLACK_WEBHOOK_URL: "hooks.slack.com/services/T0/B0/sekr1t" })).toThrow(
      /NOTIFY_SLACK_WEBHOOK_URL: must be the Slack incoming-webhook URL.*\(got "<redacted>"\)/,
    );
    expect(() => loadEnv({ SMTP_URL: "mail.example.com" })).toThrow(/SMTP_URL: must look like smtp:\/\/.*<redacted>/);
  });

  it("channels are shown by host only, and their URLs are scrubbed from every log line", () => {
    const configured = channels({
      NOTIFY_WEBHOOK_URL: "https://hooks.example.com/in/abcSECRETpath?token=qqq",
      NOTIFY_TEAMS_WEBHOOK_URL:
        "https://prod.westeurope.logic.azure.com/workflows/1/triggers/manual/paths/invoke?sig=TEAMSSIG123",
      SMTP_URL: "smtp://notify:smtpPa55word@mail.example.com:587",
      NOTIFY_EMAIL_TO: "team@example.com",
      NOTIFY_EMAIL_FROM: "bot@example.com",
    });
    expect(configured.map((c) => [c.name, c.display])).toEqual([
      ["webhook", "hooks.example.com"],
      ["teams", "prod.westeurope.logic.azure.com"],
      ["email", "mail.example.com:587 → team@example.com"],
    ]);
    const logged = JSON.stringify(
      scrub({
        error: "connect to https://hooks.example.com/in/abcSECRETpath?token=qqq failed",
        detail: "auth smtpPa55word refused",
        webhookUrl: "anything",
      }),
    );
    for (const secret of ["abcSECRETpath", "smtpPa55word", "anything"]) expect(logged).not.toContain(secret);
  });
});

describe("message shapes", () => {
  it("the webhook body is exactly the contract, and the signature is the HMAC of those bytes", () => {
    const raw = webhookBody(message);
    expect(Object.keys(JSON.parse(raw))).toEqual(["event", "id", "occurredAt", "summary", "details", "url"]);
    // Known answer: HMAC-SHA256("key", "1700000000.The quick brown fox jumps over the lazy dog"), by Python's hmac.
    expect(signatureOf("key", "The quick brown fox jumps over the lazy dog", 1_700_000_000)).toBe(
      "t=1700000000,v1=2f658d6aef4f246e91cd741bbcded7479e9605f9d41c9e248122a117e0e1765b",
    );
  });

  it("Slack gets Block Kit with a fallback text; Teams an Adaptive Card in the workflow message shape", () => {
    const slack = JSON.parse(slackBody(message));
    expect(slack.text).toBe(`Action needed: quarantine.started: ${message.summary}`);
    expect(slack.blocks[2].fields).toEqual([
      { type: "mrkdwn", text: "*family*\nscim" },
      { type: "mrkdwn", text: "*reason*\nauth" },
      { type: "mrkdwn", text: "*lastStatus*\n401" },
    ]);
    const teams = JSON.parse(teamsBody({ ...message, event: "quarantine.ended" }));
    const card = teams.attachments[0].content;
    expect(card.body[0].text).toBe("Resolved: quarantine.ended");
    expect(card.body[2].facts).toEqual([
      { title: "family", value: "scim" },
      { title: "reason", value: "auth" },
      { title: "lastStatus", value: "401" },
    ]);
    expect(card.actions).toEqual([{ type: "Action.OpenUrl", title: "Open in scim-connector", url: message.url }]);
  });

  it("email has a stable Message-ID per message", () => {
    expect(emailContent(message).messageId).toBe(`<${message.id}.quarantine.started@scim-connector>`);
    expect(emailContent({ ...message, url: null }).text).not.toContain("Open:");
  });

  it.each([
    [null, undefined],
    ["120", 120_000],
    ["Tue, 24 Nov 2026 03:00:30 GMT", 30_000],
    ["Tue, 24 Nov 2026 02:00:00 GMT", 0],
    ["soon", undefined],
    ["86400", 86_400_000],
    ["86401", Infinity],
    ["99999999999999999999999", Infinity],
    ["Fri, 01 Jan 2100 00:00:00 GMT", Infinity],
  ])("Retry-After %j → %j ms", (header, ms) => {
    expect(retryAfterMs(header, Date.parse("2026-11-24T03:00:00Z"))).toBe(ms);
  });
});

describe("docs/alerts/examples/", () => {
  it("show exactly what each channel sends for the example message", async () => {
    const { readFile } = await import("node:fs/promises");
    const { EXAMPLE_MESSAGE } = await import("./exampleMessage.js");
    const example = (name: string) => readFile(new URL(`../../docs/alerts/examples/${name}`, import.meta.url), "utf8");
    expect(JSON.parse(await example("webhook.json"))).toEqual(JSON.parse(webhookBody(EXAMPLE_MESSAGE)));
    expect(JSON.parse(await example("slack.json"))).toEqual(JSON.parse(slackBody(EXAMPLE_MESSAGE)));
    expect(JSON.parse(await example("teams.json"))).toEqual(JSON.parse(teamsBody(EXAMPLE_MESSAGE)));
    const mail = emailContent(EXAMPLE_MESSAGE);
    expect(await example("email.txt")).toBe(
      `Subject: ${mail.subject}\nMessage-ID: ${mail.messageId}\n\n${mail.text}\n`,
    );
  });
});
