import { describe, expect, it } from "vitest";
import { signatureOf } from "../../src/notify/channels.js";
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
