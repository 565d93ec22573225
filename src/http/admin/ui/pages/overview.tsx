import { ActionButton, Badge, formatTime, NoData, Section } from "../components/basics.js";
import { BudgetGauge, StackedBarChart } from "../components/charts.js";
import { DataTable } from "../components/table.js";
import { can } from "../../../../policy.js";
import type { PageContext } from "../layout.js";
import { RunStatusBadge } from "./runs.js";
import type { OverviewData } from "../../../../admin/overview.js";

const SERIES_ORDER = ["deprovision", "update", "create", "adopt", "verify", "lookup", "discover"];

export function OverviewPage({ data, ctx }: { data: OverviewData; ctx: PageContext }) {
  const base = ctx.basePath;
  const actions = new Set(data.callsPerDay.flatMap((d) => Object.keys(d.byAction)));
  const series = [
    ...SERIES_ORDER.filter((s) => actions.has(s)),
    ...[...actions].filter((a) => !SERIES_ORDER.includes(a)).sort(),
  ];
  const queued = data.queue.reduce((n, q) => n + q.depth, 0);
  return (
    <div>
      {data.mappingNotice ? (
        <p class="flash" role="status">
          {data.mappingNotice}
        </p>
      ) : null}
      <QuarantinePanel rows={data.quarantine} ctx={ctx} />
      <PermissionModelPanel view={data.permissions} />
      <div class="grid">
        <Section title="Today's platform SCIM budget">
          <BudgetGauge {...data.budget} resetsLabel={formatTime(data.budget.resetsAt)} />
        </Section>
        <Section title="Waiting for approval">
          <p>
            <span class="stat">{data.held.deprovisions}</span> held deprovisions ·{" "}
            <span class="stat">{data.held.emailChanges}</span> email changes
          </p>
          {data.held.deprovisions + data.held.emailChanges > 0 ? (
            <a href={`${base}/approvals`}>Review approvals →</a>
          ) : null}
        </Section>
      </div>
      <Section title="Platform calls per day (last 14 days)">
        {data.callsPerDay.length ? (
          <StackedBarChart
            title="Platform SCIM calls per day by action"
            series={series}
            colorOf={(s, i) => (SERIES_ORDER.includes(s) ? SERIES_ORDER.indexOf(s) : i)}
            days={data.callsPerDay.map((d) => ({ label: d.day.slice(5), values: d.byAction }))}
          />
        ) : (
          <NoData>No platform calls yet.</NoData>
        )}
      </Section>
      <div class="grid">
        <Section title="Queue">
          <p>
            <span class="stat">{queued.toLocaleString("en")}</span> users waiting
            {data.queueEta ? ` · ${data.queueEta}` : ""}
          </p>
          {data.settling && data.settling.count > 0 ? (
            <p>
              {data.settling.count.toLocaleString("en")} waiting to settle (grants held until the user is quiet, so they
              go out in one call)
              {data.settling.nextAt ? ` · the next goes at ${formatTime(data.settling.nextAt)}` : ""}
            </p>
          ) : null}
          {data.pendingDeletes && data.pendingDeletes.count > 0 ? (
            <p>
              {data.pendingDeletes.count.toLocaleString("en")} pending delete
              {data.pendingDeletes.count === 1 ? "" : "s"} (access already removed; the account is kept until its grace
              ends)
              {data.pendingDeletes.nextAt ? ` · the next at ${formatTime(data.pendingDeletes.nextAt)}` : ""}
            </p>
          ) : null}
          <DataTable
            rows={data.queue}
            empty="The queue is empty."
            columns={[
              { label: "Priority", cell: (q) => q.priority },
              { label: "Users", cell: (q) => q.depth, numeric: true },
              { label: "Waiting to settle", cell: (q) => q.settling, numeric: true },
            ]}
          />
        </Section>
        <Section title="Failures needing attention">
          <DataTable
            rows={data.failures}
            empty="No failures."
            columns={[
              {
                label: "User",
                cell: (f) =>
                  f.userId ? <a href={`${base}/users/${encodeURIComponent(f.userId)}`}>{f.userName}</a> : f.userName,
              },
              { label: "Error", cell: (f) => <Badge tone="bad">{f.error}</Badge> },
              { label: "When", cell: (f) => formatTime(f.at) },
            ]}
          />
        </Section>
      </div>
      <div class="grid">
        <Section title="Mirror sync">
          <DataTable
            rows={data.mirrorLag}
            empty="No mirror tables."
            columns={[
              { label: "Table", cell: (m) => m.table },
              { label: "Pending rows", cell: (m) => m.pending, numeric: true },
              {
                label: "Lag",
                cell: (m) => (m.lagSeconds === null ? "—" : `${Math.round(m.lagSeconds)} s`),
                numeric: true,
              },
            ]}
          />
        </Section>
        <Section title="Last resync runs">
          <DataTable
            rows={data.lastRuns}
            empty="No resync has run yet."
            columns={[
              { label: "Started", cell: (r) => formatTime(r.startedAt) },
              { label: "Status", cell: (r) => <RunStatusBadge run={r} /> },
              { label: "Verified", cell: (r) => r.progress.verified, numeric: true },
              { label: "Drift", cell: (r) => r.progress.drifted, numeric: true },
            ]}
          />
        </Section>
      </div>
    </div>
  );
}

const STATE_WORDS: Record<string, string> = {
  cooling: "paused",
  "awaiting-probe": "cooling over: the next unit of work probes",
  probing: "probing now",
};

/** Quarantined families first on the page: while one is listed, its work waits in the queue. */
function PermissionModelPanel({ view }: { view: OverviewData["permissions"] }) {
  return (
    <Section title="Permission model">
      {view.refusing ? (
        <p class="flash flash-error" role="alert">
          The platform refuses legacy permission strings (since {formatTime(view.refusing.since)}
          {view.refusing.value ? (
            <>
              , first refused: <code>{view.refusing.value}</code>
            </>
          ) : null}
          ). <span class="stat">{view.heldGrants}</span> grants are held until the mapping is migrated: run{" "}
          <code>scim-connector mapping migrate MAPPING_FILE --write</code>. Reductions keep going out.
        </p>
      ) : null}
      <p>
        Mapping: <Badge tone={view.mapping === "granular" ? "good" : "warn"}>{view.mapping}</Badge> · platform answers
        with: <Badge tone={view.platform === "legacy" ? "warn" : "neutral"}>{view.platform}</Badge>
        {view.learnedAt ? <> (learned from its answers, {formatTime(view.learnedAt)})</> : null}
      </p>
      {view.mapping === "legacy" ? (
        <p class="hint">
          The platform stops accepting legacy permission strings in December 2026: see docs/granular-permissions.md.
        </p>
      ) : null}
    </Section>
  );
}

function QuarantinePanel({ rows, ctx }: { rows: NonNullable<OverviewData["quarantine"]>; ctx: PageContext }) {
  const mayResume = can(ctx.actor.role, "resume");
  return (
    <Section title="Platform quarantine">
      <DataTable
        rows={rows}
        empty="No platform family is quarantined."
        columns={[
          { label: "Family", cell: (q) => q.family },
          { label: "State", cell: (q) => <Badge tone="bad">{STATE_WORDS[q.state] ?? q.state}</Badge> },
          { label: "Why", cell: (q) => `${q.reason === "auth" ? "credentials refused" : "failure rate"}: ${q.detail}` },
          { label: "Since", cell: (q) => formatTime(q.since) },
          { label: "Probe from", cell: (q) => formatTime(q.resumeAt) },
          ...(mayResume
            ? [
                {
                  label: "",
                  cell: (q: { family: string }) => (
                    <ActionButton
                      action={`${ctx.basePath}/quarantine/${encodeURIComponent(q.family)}/resume`}
                      csrf={ctx.csrf}
                      label="Resume now"
                    />
                  ),
                },
              ]
            : []),
        ]}
      />
    </Section>
  );
}
