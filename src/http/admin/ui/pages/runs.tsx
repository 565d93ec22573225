import { ActionButton, Badge, formatTime } from "../components/basics.js";
import { DataTable } from "../components/table.js";
import { can } from "../../../../policy.js";
import type { PageContext } from "../layout.js";
import { runStatus, type RunsData } from "../../../../admin/runs/runs.js";

export function RunsPage({ data, ctx }: { data: RunsData; ctx: PageContext }) {
  return (
    <div>
      <p>
        Next scheduled full resync: <strong>{formatTime(data.nextRunAt)}</strong>
      </p>
      {can(ctx.actor.role, "resync") ? (
        <ActionButton action={`${ctx.basePath}/runs/resync`} csrf={ctx.csrf} label="Start a full resync now" />
      ) : null}
      <DataTable
        rows={data.runs}
        empty="No full resync has run yet."
        columns={[
          { label: "Started", cell: (r) => formatTime(r.startedAt) },
          { label: "Finished", cell: (r) => formatTime(r.finishedAt) },
          { label: "Status", cell: (r) => <RunStatusBadge run={r} /> },
          {
            label: "Users evaluated",
            cell: (r) => `${r.progress.usersEvaluated} / ${r.progress.usersTotal}`,
            numeric: true,
          },
          { label: "Queued", cell: (r) => r.progress.usersQueued, numeric: true },
          {
            label: "Verified",
            cell: (r) => (r.progress.verifyTotal ? `${r.progress.verified} / ${r.progress.verifyTotal}` : "—"),
            numeric: true,
          },
          { label: "Drift found", cell: (r) => r.progress.drifted, numeric: true },
          { label: "Calls", cell: (r) => r.progress.callsSpent, numeric: true },
          { label: "ETA", cell: (r) => (r.eta ? formatTime(r.eta) : "—") },
        ]}
      />
    </div>
  );
}

/** A run's status in a word or three, coloured: failed is bad, finished good, running info. */
export function RunStatusBadge({ run }: { run: RunsData["runs"][number] }) {
  return <Badge tone={run.status === "failed" ? "bad" : run.finishedAt ? "good" : "info"}>{runStatus(run)}</Badge>;
}
