import type { ImportResultView, ImportView, PlatformRecordView } from "../../../../admin/platformRecord.js";
import { can } from "../../../../policy.js";
import { CsrfField, Facts, formatTime, Section } from "../components/basics.js";
import { DataTable } from "../components/table.js";
import type { PageContext } from "../layout.js";

/**
 * The platform's own record (docs/platform-record.md): upload the Security Event report downloaded
 * from the platform's dashboard (admins), see what the import just made read, kept and found, and
 * the recent imports (the daily S3 export's among them).
 */
export function PlatformPage(props: {
  data: PlatformRecordView;
  ctx: PageContext;
  result?: ImportResultView;
  refusal?: string;
}) {
  const { data, ctx, result, refusal } = props;
  return (
    <div>
      <p>
        The platform's Security Event report (Settings → Admin Settings → Security Settings, "Security Event Download")
        tells who added, changed and removed accounts in its dashboard. Each event is kept once, however often it is
        imported.{" "}
        {data.exportSource
          ? `The daily export is read from ${data.exportSource}.`
          : "The daily S3 export is not configured (SECURITY_EVENTS_S3_URI)."}
      </p>
      {refusal ? (
        <p class="flash flash-error" role="alert">
          {refusal}
        </p>
      ) : null}
      {result ? <ImportResult result={result} /> : null}
      {can(ctx.actor.role, "platformEvents") ? (
        <Section title="Import a report">
          <form method="post" action={`${ctx.basePath}/platform/events`} class="stack" enctype="multipart/form-data">
            <CsrfField token={ctx.csrf} />
            <label for="report">The Security Event report (CSV, at most 20 MB)</label>
            <input type="file" id="report" name="report" accept=".csv,text/csv" required />
            <button type="submit" class="button">
              Import
            </button>
          </form>
        </Section>
      ) : null}
      <Section title="Recent imports">
        <DataTable
          rows={data.imports}
          empty="Nothing imported yet."
          columns={[
            { label: "When", cell: (i) => formatTime(i.at) },
            { label: "From", cell: (i) => i.source },
            { label: "By", cell: (i) => i.actor ?? "the export's poller" },
            { label: "Rows", cell: (i) => i.rows, numeric: true },
            { label: "Imported", cell: (i) => i.imported, numeric: true },
            { label: "Already known", cell: (i) => i.duplicates, numeric: true },
            { label: "Skipped", cell: (i) => <SkippedLines view={i} /> },
          ]}
        />
      </Section>
    </div>
  );
}

function ImportResult({ result }: { result: ImportResultView }) {
  return (
    <Section title="Imported" id="import-result">
      <Facts
        items={[
          ["Rows read", result.rows],
          ["Events imported", result.imported],
          ["Already known", result.duplicates],
          ["Lines skipped", result.skipped.length + result.moreSkipped],
          ...(result.findings
            ? Object.entries(result.findings).map(([name, count]): [string, number] => [`Found: ${name}`, count])
            : []),
        ]}
      />
      <SkippedLines view={result} />
    </Section>
  );
}

function SkippedLines({ view }: { view: Pick<ImportView, "skipped" | "moreSkipped"> }) {
  if (!view.skipped.length) return <>none</>;
  return (
    <ul class="skipped-lines">
      {view.skipped.map((s) => (
        <li>
          line {s.line}: {s.reason}
        </li>
      ))}
      {view.moreSkipped ? <li>and {view.moreSkipped} more</li> : null}
    </ul>
  );
}
