/**
 * What each channel sends for one notification (pure). The generic webhook body is the contract:
 * `{"event", "id", "occurredAt", "summary", "details", "url"}`; `id` is the incident id, the same
 * for an incident's opening and resolution messages (receivers deduplicate on `event` + `id`).
 */

export type NotificationMessage = {
  event: string;
  id: string;
  occurredAt: string;
  summary: string;
  details: Record<string, unknown>;
  url: string | null;
};

export function webhookBody(m: NotificationMessage): string {
  return JSON.stringify({
    event: m.event,
    id: m.id,
    occurredAt: m.occurredAt,
    summary: m.summary,
    details: m.details,
    url: m.url,
  });
}

const RESOLUTIONS = new Set(["quarantine.ended", "approval.decided", "idp.silent.ended"]);

function title(m: NotificationMessage): string {
  const mark = RESOLUTIONS.has(m.event) ? "Resolved" : m.event === "notification.test" ? "Test" : "Action needed";
  return `${mark}: ${m.event}`;
}

/** details as label/value pairs, flat and short (channels show them as facts). */
function facts(details: Record<string, unknown>): { label: string; value: string }[] {
  return Object.entries(details)
    .filter(([, v]) => v !== null && v !== undefined)
    .slice(0, 10)
    .map(([label, v]) => ({
      label,
      value: (Array.isArray(v) ? v.join(", ") : typeof v === "object" ? JSON.stringify(v) : String(v)).slice(0, 300),
    }));
}

/** Slack incoming webhook: Block Kit, with `text` as the notification fallback. */
export function slackBody(m: NotificationMessage): string {
  const fields = facts(m.details).map((f) => ({ type: "mrkdwn", text: `*${f.label}*\n${escapeSlack(f.value)}` }));
  return JSON.stringify({
    text: `${title(m)}: ${m.summary}`,
    blocks: [
      { type: "header", text: { type: "plain_text", text: title(m).slice(0, 150) } },
      { type: "section", text: { type: "mrkdwn", text: escapeSlack(m.summary) } },
      ...(fields.length ? [{ type: "section", fields }] : []),
      ...(m.url
        ? [
            {
              type: "actions",
              elements: [{ type: "button", text: { type: "plain_text", text: "Open in scim-connector" }, url: m.url }],
            },
          ]
        : []),
      { type: "context", elements: [{ type: "mrkdwn", text: `${m.event} · ${m.id} · ${m.occurredAt}` }] },
    ],
  });
}

function escapeSlack(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** Teams "Post to a channel when a webhook request is received" workflow: a message with one Adaptive Card. */
export function teamsBody(m: NotificationMessage): string {
  return JSON.stringify({
    type: "message",
    attachments: [
      {
        contentType: "application/vnd.microsoft.card.adaptive",
        contentUrl: null,
        content: {
          $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
          type: "AdaptiveCard",
          version: "1.4",
          body: [
            { type: "TextBlock", text: title(m), weight: "Bolder", size: "Medium", wrap: true },
            { type: "TextBlock", text: m.summary, wrap: true },
            { type: "FactSet", facts: facts(m.details).map((f) => ({ title: f.label, value: f.value })) },
            {
              type: "TextBlock",
              text: `${m.event} · ${m.id} · ${m.occurredAt}`,
              isSubtle: true,
              size: "Small",
              wrap: true,
            },
          ],
          ...(m.url ? { actions: [{ type: "Action.OpenUrl", title: "Open in scim-connector", url: m.url }] } : {}),
        },
      },
    ],
  });
}

export function emailContent(m: NotificationMessage): { subject: string; text: string; messageId: string } {
  const lines = [m.summary, "", ...facts(m.details).map((f) => `${f.label}: ${f.value}`), ""];
  if (m.url) lines.push(`Open: ${m.url}`, "");
  lines.push(`event: ${m.event}`, `id: ${m.id}`, `occurred at: ${m.occurredAt}`);
  return {
    subject: `[scim-connector] ${title(m)}: ${m.summary}`.slice(0, 200),
    text: lines.join("\n"),
    // Stable per message: a resend after a crash is recognisable as the same mail.
    messageId: `<${m.id}.${m.event}@scim-connector>`,
  };
}
