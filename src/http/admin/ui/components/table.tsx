import type { ComponentChildren } from "preact";
import { NoData } from "./basics.js";

export type Column<T> = {
  label: string;
  cell: (row: T) => ComponentChildren;
  /** Right-aligned, tabular figures. */
  numeric?: boolean;
  /** Kept on one line (times, short codes). */
  nowrap?: boolean;
};

export function DataTable<T>(props: { columns: Column<T>[]; rows: T[]; empty?: string; caption?: string }) {
  if (!props.rows.length) return <NoData>{props.empty ?? "Nothing to show."}</NoData>;
  return (
    <div class="table-wrap">
      <table>
        {props.caption ? <caption>{props.caption}</caption> : null}
        <thead>
          <tr>
            {props.columns.map((c) => (
              <th scope="col" class={c.numeric ? "num" : undefined}>
                {c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((row) => (
            <tr>
              {props.columns.map((c) => (
                <td class={[c.numeric ? "num" : "", c.nowrap ? "nowrap" : ""].filter(Boolean).join(" ") || undefined}>
                  {c.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
