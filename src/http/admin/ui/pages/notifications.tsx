import { can } from "../../../../policy.js";
import { ActionButton, Badge, formatTime, Section, type Tone } from "../components/basics.js";
import { DataTable } from "../components/table.js";
import type { PageContext } from "../layout.js";
import type { NotificationsData } from "../../../../admin/notifications.js";

const STATE_TONE: Record<string, Tone> = { sent: "good", pending: "info", parked: "bad" };

export function NotificationsPage({ data, ctx }: { data: NotificationsData; ctx: PageContext }) {
  const mayTest = can(ctx.actor.role, "notifyTest");
  return (
    <div>
      <Section title="Channels">
        <DataTable
          rows={data.channels}
          empty="No channel is configured: set NOTIFY_WEBHOOK_URL, NOTIFY_SLACK_WEBHOOK_URL, NOTIFY_TEAMS_WEBHOOK_URL or SMTP_URL (docs/operations.md, Alerts)."
          columns={[
            { label: "Channel", cell: (c) => c.name },
            { label: "Sends to", cell: (c) => <code>{c.target}</code> },
            ...(mayTest
              ? [
                  {
                    label: "",
                    cell: (c: { name: string }) => (
                      <ActionButton
                        action={`${ctx.basePath}/notifications/test/${encodeURIComponent(c.name)}`}
                        csrf={ctx.csrf}
                        label="Send a test notification"
                      />
                    ),
                  },
                ]
              : []),
          ]}
        />
      </Section>
      <Section title="Outbox">
        <DataTable
          rows={data.outbox}
          empty="Nothing has been notified yet."
          caption="The newest 100 messages; each is delivered once to every channel configured when it was written."
          columns={[
            { label: "Occurred", cell: (m) => formatTime(m.occurredAt), nowrap: true },
            { label: "Event", cell: (m) => <code>{m.event}</code>, nowrap: true },
            { label: "Summary", cell: (m) => m.summary },
            {
              label: "Deliveries",
              cell: (m) =>
                m.deliveries.length ? (
                  <ul class="plain-list">
                    {m.deliveries.map((d) => (
                      <li>
                        {d.channel} <Badge tone={STATE_TONE[d.state]}>{d.state}</Badge>{" "}
                        {d.attempts > 1 ? `${d.attempts} attempts` : ""}
                        {d.state === "pending" && d.attempts > 0 ? ` · next ${formatTime(d.nextAttemptAt)}` : ""}
                        {d.lastError && d.state !== "sent" ? <div class="hint">{d.lastError}</div> : null}
                      </li>
                    ))}
                  </ul>
                ) : (
                  <span class="hint">no channel configured</span>
                ),
            },
            { label: "Incident", cell: (m) => <code title={m.incidentId}>{m.incidentId.slice(0, 8)}</code> },
          ]}
        />
      </Section>
    </div>
  );
}
