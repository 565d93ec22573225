import { ActionButton, Badge, formatTime } from "../components/basics.js";
import { DataTable } from "../components/table.js";
import { can } from "../../policy.js";
import type { PageContext } from "../layout.js";

export type RunRow = {
  id: string;
  startedAt: Date;
  finishedAt: Date | null;
  status: string;
  evaluated: number;
  usersTotal: number;
  queued: number;
  verified: number;
  verifyTotal: number;
  drift: number;
  callsSpent: number;
  /** When verification should be done at the spare-budget pace (running verifying runs only). */
  eta: Date | null;
};
export type RunsData = { runs: RunRow[]; nextRunAt: Date | null };

export function RunsPage({ data, ctx }: { data: RunsData; ctx: PageContext }) {
  return (
    <div>
      <p>
        Next scheduled full resync: <strong>{formatTime(data.nextRunAt)}</strong>
      </p>
      {can(ctx.actor.role, "resync") ? <ActionButton action={`${ctx.basePath}/runs/resync`} csrf={ctx.csrf} label="Start a full resync now" /> : null}
      <DataTable
        rows={data.runs}
        empty="No full resync has run yet."
        columns={[
          { label: "Started", cell: (r) => formatTime(r.startedAt) },
          { label: "Finished", cell: (r) => formatTime(r.finishedAt) },
          { label: "Status", cell: (r) => <Badge tone={r.status === "failed" ? "bad" : r.finishedAt ? "good" : "info"}>{r.status}</Badge> },
          { label: "Users evaluated", cell: (r) => `${r.evaluated} / ${r.usersTotal}`, numeric: true },
          { label: "Queued", cell: (r) => r.queued, numeric: true },
          { label: "Verified", cell: (r) => (r.verifyTotal ? `${r.verified} / ${r.verifyTotal}` : "—"), numeric: true },
          { label: "Drift found", cell: (r) => r.drift, numeric: true },
          { label: "Calls", cell: (r) => r.callsSpent, numeric: true },
          { label: "ETA", cell: (r) => (r.eta ? formatTime(r.eta) : "—") },
        ]}
      />
    </div>
  );
}
