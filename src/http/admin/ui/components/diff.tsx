import type { PermissionBundle } from "../../../../admin/mapping/permissionBundles.js";
import { FOLD_OVER, FoldedStrings } from "./bundles.js";

/**
 * Old → new as a readable diff of two JSON values (a dashboard user's permission tree): each
 * leaf becomes a path such as `workspaces.Marketing.permissions`, then rows are marked added,
 * removed or changed. Arrays of scalars are compared as sets, which is how permissions behave.
 */

type Leaf = string | number | boolean | null;
export type DiffRow = { path: string; kind: "added" | "removed" | "changed" | "same"; before?: string; after?: string };

export function diffValues(before: unknown, after: unknown): DiffRow[] {
  return diffRows(before, after).map(({ list: _list, item: _item, ...row }) => row);
}

/** An array's item: the array's path (`list`) and the item, beside its row's path `list[item]`. */
type ListItem = { list: string; item: string };
type Row = DiffRow & Partial<ListItem>;

function diffRows(before: unknown, after: unknown): Row[] {
  const items = new Map<string, ListItem>();
  const a = flatten(before, "", new Map(), items);
  const b = flatten(after, "", new Map(), items);
  const paths = [...new Set([...a.keys(), ...b.keys()])].sort();
  return paths.map((path): Row => {
    const x = a.get(path);
    const y = b.get(path);
    const listItem = items.get(path);
    if (x === undefined) return { path, kind: "added", after: y, ...listItem };
    if (y === undefined) return { path, kind: "removed", before: x, ...listItem };
    return x === y
      ? { path, kind: "same", before: x, after: y, ...listItem }
      : { path, kind: "changed", before: x, after: y };
  });
}

function flatten(
  value: unknown,
  prefix: string,
  out: Map<string, string>,
  items: Map<string, ListItem>,
): Map<string, string> {
  if (value === undefined) return out;
  if (Array.isArray(value) && value.every(isLeaf)) {
    for (const item of value) {
      out.set(`${prefix}[${String(item)}]`, "✓");
      items.set(`${prefix}[${String(item)}]`, { list: prefix, item: String(item) });
    }
    return out;
  }
  if (Array.isArray(value)) {
    value.forEach((item, i) => flatten(item, `${prefix}[${i}]`, out, items));
    return out;
  }
  if (value && typeof value === "object") {
    for (const [key, inner] of Object.entries(value)) flatten(inner, prefix ? `${prefix}.${key}` : key, out, items);
    return out;
  }
  out.set(prefix || "(value)", JSON.stringify(value));
  return out;
}

function isLeaf(v: unknown): v is Leaf {
  return v === null || ["string", "number", "boolean"].includes(typeof v);
}

/** One row of the view: a leaf, or the strings of one list changed the same way (a bundle's, or many). */
type ViewRow =
  | { row: DiffRow }
  | { list: string; kind: DiffRow["kind"]; label: string | undefined; strings: string[]; fold: boolean };

/**
 * The rows as drawn: a list's strings grouped by how they changed and by the bundle they belong to
 * (the reviews' grouping, `bundles`), each group one row where it is a bundle or more than
 * FOLD_OVER strings; a legacy state's few strings keep a row each.
 */
function viewRows(rows: readonly Row[], bundles: readonly PermissionBundle[]): ViewRow[] {
  const bundleOf = new Map<string, PermissionBundle>();
  for (const b of bundles) for (const s of b.strings) bundleOf.set(JSON.stringify([b.list, s]), b);
  const groups = new Map<string, Extract<ViewRow, { list: string }>>();
  const out: ViewRow[] = [];
  for (const row of rows) {
    if (row.list === undefined || row.item === undefined || row.kind === "changed") {
      out.push({ row });
      continue;
    }
    const label = bundleOf.get(JSON.stringify([row.list, row.item]))?.label;
    const key = JSON.stringify([row.list, row.kind, label ?? null]);
    let group = groups.get(key);
    if (!group) {
      groups.set(key, (group = { list: row.list, kind: row.kind, label, strings: [], fold: label !== undefined }));
      out.push(group);
    }
    group.strings.push(row.item);
  }
  return out.flatMap((v) => {
    if ("row" in v || v.fold || v.strings.length > FOLD_OVER) return [v];
    return v.strings.map((item): ViewRow => ({ row: rows.find((r) => r.list === v.list && r.item === item)! }));
  });
}

const SIGN = { added: "+", removed: "−", changed: "~", same: " " } as const;

export function DiffView(props: {
  before: unknown;
  after: unknown;
  showUnchanged?: boolean;
  /** The granular bundles of the state shown: their strings are drawn as one row each bundle. */
  bundles?: readonly PermissionBundle[] | undefined;
}) {
  const rows = diffRows(props.before, props.after).filter((r) => props.showUnchanged || r.kind !== "same");
  if (!rows.length) return <p class="no-data">No differences.</p>;
  return (
    <table class="diff">
      <thead>
        <tr>
          <th scope="col" />
          <th scope="col">Field</th>
          <th scope="col">Old</th>
          <th scope="col">New</th>
        </tr>
      </thead>
      <tbody>
        {viewRows(rows, props.bundles ?? []).map((v) => {
          if ("row" in v) {
            const r = v.row;
            return (
              <tr class={`diff-${r.kind}`}>
                <td class="diff-sign" aria-label={r.kind}>
                  {SIGN[r.kind]}
                </td>
                <td>
                  <code>{r.path}</code>
                </td>
                <td>{r.before ?? ""}</td>
                <td>{r.after ?? ""}</td>
              </tr>
            );
          }
          // The strings once: in Old when removed, in New otherwise (unchanged: Old says so).
          const strings = <FoldedStrings strings={v.strings} label={v.label} />;
          return (
            <tr class={`diff-${v.kind} diff-bundle`}>
              <td class="diff-sign" aria-label={v.kind}>
                {SIGN[v.kind]}
              </td>
              <td>
                <code>{v.list}</code>
              </td>
              <td>{v.kind === "removed" ? strings : v.kind === "same" ? "the same" : ""}</td>
              <td>{v.kind === "removed" ? "" : strings}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
