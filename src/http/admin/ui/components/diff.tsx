/**
 * Old → new as a readable diff of two JSON values (a dashboard user's permission tree): each
 * leaf becomes a path such as `workspaces.Marketing.permissions`, then rows are marked added,
 * removed or changed. Arrays of scalars are compared as sets, which is how permissions behave.
 */

type Leaf = string | number | boolean | null;
export type DiffRow = { path: string; kind: "added" | "removed" | "changed" | "same"; before?: string; after?: string };

export function diffValues(before: unknown, after: unknown): DiffRow[] {
  const a = flatten(before);
  const b = flatten(after);
  const paths = [...new Set([...a.keys(), ...b.keys()])].sort();
  return paths.map((path) => {
    const x = a.get(path);
    const y = b.get(path);
    if (x === undefined) return { path, kind: "added", after: y };
    if (y === undefined) return { path, kind: "removed", before: x };
    return x === y ? { path, kind: "same", before: x, after: y } : { path, kind: "changed", before: x, after: y };
  });
}

function flatten(value: unknown, prefix = "", out = new Map<string, string>()): Map<string, string> {
  if (value === undefined) return out;
  if (Array.isArray(value) && value.every(isLeaf)) {
    for (const item of value) out.set(`${prefix}[${String(item)}]`, "✓");
    return out;
  }
  if (Array.isArray(value)) {
    value.forEach((item, i) => flatten(item, `${prefix}[${i}]`, out));
    return out;
  }
  if (value && typeof value === "object") {
    for (const [key, inner] of Object.entries(value)) flatten(inner, prefix ? `${prefix}.${key}` : key, out);
    return out;
  }
  out.set(prefix || "(value)", JSON.stringify(value));
  return out;
}

function isLeaf(v: unknown): v is Leaf {
  return v === null || ["string", "number", "boolean"].includes(typeof v);
}

export function DiffView(props: { before: unknown; after: unknown; showUnchanged?: boolean }) {
  const rows = diffValues(props.before, props.after).filter((r) => props.showUnchanged || r.kind !== "same");
  if (!rows.length) return <p class="no-data">No differences.</p>;
  const sign = { added: "+", removed: "−", changed: "~", same: " " } as const;
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
        {rows.map((r) => (
          <tr class={`diff-${r.kind}`}>
            <td class="diff-sign" aria-label={r.kind}>
              {sign[r.kind]}
            </td>
            <td>
              <code>{r.path}</code>
            </td>
            <td>{r.before ?? ""}</td>
            <td>{r.after ?? ""}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
