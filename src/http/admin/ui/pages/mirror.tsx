import { Badge, formatTime, Section } from "../components/basics.js";
import { DataTable } from "../components/table.js";
import type { MirrorData } from "../../../../admin/mirror.js";

export function MirrorPage({ data }: { data: MirrorData }) {
  return (
    <div>
      <Section title="Sync status">
        <DataTable
          rows={data.tables}
          empty="No mirror tables are configured."
          columns={[
            { label: "Table", cell: (t) => t.name },
            { label: "State", cell: (t) => <Badge tone={t.state === "ok" ? "good" : "warn"}>{t.state}</Badge> },
            { label: "Pending rows", cell: (t) => t.pending, numeric: true },
            {
              label: "Lag",
              cell: (t) => (t.lagSeconds === null ? "—" : `${Math.round(t.lagSeconds)} s`),
              numeric: true,
            },
            { label: "Last push", cell: (t) => formatTime(t.lastPushAt) },
          ]}
        />
      </Section>
      <Section title="Parked rows">
        <DataTable
          rows={data.parked}
          empty="No parked rows."
          columns={[
            { label: "Table", cell: (p) => p.table },
            { label: "Row", cell: (p) => <code>{p.key}</code> },
            { label: "Error", cell: (p) => p.error },
            { label: "Parked", cell: (p) => formatTime(p.parkedAt) },
          ]}
        />
      </Section>
    </div>
  );
}
