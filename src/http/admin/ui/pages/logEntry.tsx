import { Badge, Facts, formatTime, Section } from "../components/basics.js";
import { DiffView } from "../components/diff.js";
import type { PageContext } from "../layout.js";
import { outcomeTone } from "./log.js";
import type { LogEntryDetail } from "../../../../admin/log.js";

export function LogEntryPage({ entry, ctx }: { entry: LogEntryDetail; ctx: PageContext }) {
  const base = ctx.basePath;
  return (
    <div>
      <p>
        <a href={`${base}/log`}>← Reconciliation log</a>
      </p>
      <Section title="Decision">
        <Facts
          items={[
            ["When", formatTime(entry.at)],
            [
              "User",
              entry.userId ? (
                <a href={`${base}/users/${encodeURIComponent(entry.userId)}`}>{entry.userName ?? entry.userId}</a>
              ) : (
                (entry.userName ?? "—")
              ),
            ],
            ["Action", entry.action],
            ["Outcome", <Badge tone={outcomeTone(entry.outcome)}>{entry.outcome}</Badge>],
            ["By", entry.actor ?? "reconciler"],
            ["Calls spent", entry.callsSpent],
            // A failed entry says why in its error; any other entry's words are a note.
            entry.error ? ["Error", entry.error] : ["Note", entry.note ?? "—"],
          ]}
        />
      </Section>
      <Section title="Permissions: old → new">
        <DiffView before={entry.before} after={entry.after} bundles={entry.bundles} />
      </Section>
      {entry.why.length ? (
        <Section title="Why, as recorded then">
          <ul>
            {entry.why.map((line) => (
              <li>{line}</li>
            ))}
          </ul>
        </Section>
      ) : null}
      <div class="grid">
        <Section title="What triggered it">
          <p>{entry.triggerLabel}</p>
          {entry.triggerFacts.length ? (
            <Facts
              items={entry.triggerFacts.map((f) => [
                f.label,
                f.page ? <a href={`${base}/${f.page}`}>{f.value}</a> : <code>{f.value}</code>,
              ])}
            />
          ) : null}
          <details>
            <summary>As recorded</summary>
            <pre class="mono">{JSON.stringify(entry.trigger, null, 2)}</pre>
          </details>
        </Section>
        <Section title="Platform call">
          {entry.platformCall ? (
            <Facts
              items={[
                ["Request", <code>{`${entry.platformCall.method} ${entry.platformCall.path}`}</code>],
                ["Status", entry.platformCall.status ?? "no answer"],
              ]}
            />
          ) : (
            <p class="no-data">No platform call was made for this decision.</p>
          )}
        </Section>
      </div>
    </div>
  );
}
