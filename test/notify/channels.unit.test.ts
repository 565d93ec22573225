import { describe, expect, it } from "vitest";
import { ConfigError, loadEnv } from "../../src/config/env.js";
import { scrub } from "../../src/logging/logger.js";
import { channelsFromEnv, retryAfterMs } from "../../src/notify/channels.js";

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

describe("Retry-After", () => {
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
