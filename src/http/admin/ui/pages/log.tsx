import { Badge, formatTime, type Tone } from "../components/basics.js";
import { FilterForm } from "../components/filterForm.js";
import { Pager } from "../components/pager.js";
import { DataTable } from "../components/table.js";
import type { PageContext } from "../layout.js";
import type { LogFilter, LogPageData } from "../../../../admin/log.js";

export const LOG_PAGE_SIZE = 50;

export function parseLogFilter(query: Record<string, unknown>): LogFilter {
  const text = (key: string) => {
    const v = query[key];
    return typeof v === "string" && v.trim() !== "" ? v.trim().slice(0, 200) : undefined;
  };
  const page = Number.parseInt(text("page") ?? "1", 10);
  return {
    user: text("user"),
    action: text("action"),
    outcome: text("outcome"),
    trigger: text("trigger"),
    from: text("from"),
    to: text("to"),
    page: Number.isFinite(page) && page > 0 ? Math.min(page, 10_000) : 1,
  };
}

export function outcomeTone(outcome: string): Tone {
  if (outcome === "succeeded") return "good";
  if (outcome === "failed" || outcome === "rejected") return "bad";
  if (outcome === "held" || outcome === "deferred-for-budget" || outcome === "retrying") return "warn";
  return "neutral";
}

const options = (values: string[]) => values.map((v) => ({ value: v, label: v }));

export function LogPage({ data, filter, ctx }: { data: LogPageData; filter: LogFilter; ctx: PageContext }) {
  const base = `${ctx.basePath}/log`;
  const query = { ...filter, page: undefined } as Record<string, string | undefined>;
  const exportQuery = new URLSearchParams(
    Object.entries(query).filter((e): e is [string, string] => Boolean(e[1])),
  ).toString();
  return (
    <div>
      <FilterForm
        action={base}
        fields={[
          { kind: "text", name: "user", label: "User", value: filter.user, placeholder: "userName" },
          { kind: "select", name: "action", label: "Action", value: filter.action, options: options(data.actions) },
          { kind: "select", name: "outcome", label: "Outcome", value: filter.outcome, options: options(data.outcomes) },
          { kind: "select", name: "trigger", label: "Trigger", value: filter.trigger, options: options(data.triggers) },
          { kind: "datetime", name: "from", label: "From (UTC)", value: filter.from },
          { kind: "datetime", name: "to", label: "To (UTC)", value: filter.to },
        ]}
      />
      <p class="hint">
        Export this view: <a href={`${base}/export.csv${exportQuery ? `?${exportQuery}` : ""}`}>CSV</a> ·{" "}
        <a href={`${base}/export.json${exportQuery ? `?${exportQuery}` : ""}`}>JSON</a>
      </p>
      <DataTable
        rows={data.rows}
        empty="No log entries match these filters."
        columns={[
          {
            label: "When",
            cell: (r) => <a href={`${base}/${encodeURIComponent(r.id)}`}>{formatTime(r.at)}</a>,
            nowrap: true,
          },
          { label: "User", cell: (r) => r.userName ?? "—" },
          { label: "Action", cell: (r) => r.action, nowrap: true },
          { label: "Outcome", cell: (r) => <Badge tone={outcomeTone(r.outcome)}>{r.outcome}</Badge> },
          { label: "Trigger", cell: (r) => r.trigger },
          { label: "Platform", cell: (r) => r.platformStatus ?? "—", numeric: true },
          { label: "Calls", cell: (r) => r.callsSpent, numeric: true },
          { label: "By", cell: (r) => r.actor ?? "reconciler" },
        ]}
      />
      <Pager path={base} query={query} page={filter.page} hasNext={data.hasNext} />
    </div>
  );
}
