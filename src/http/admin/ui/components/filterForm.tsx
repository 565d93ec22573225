export type FilterField =
  | { kind: "text"; name: string; label: string; value?: string; placeholder?: string }
  | { kind: "select"; name: string; label: string; value?: string; options: { value: string; label: string }[] }
  | { kind: "datetime"; name: string; label: string; value?: string };

/** A GET form: filters live in the URL, so a filtered view can be bookmarked and shared. */
export function FilterForm(props: { action: string; fields: FilterField[]; submitLabel?: string }) {
  return (
    <form method="get" action={props.action} class="filters" role="search">
      {props.fields.map((field) => (
        <label>
          <span>{field.label}</span>
          {field.kind === "select" ? (
            <select name={field.name}>
              <option value="">Any</option>
              {field.options.map((o) => (
                <option value={o.value} selected={o.value === field.value}>
                  {o.label}
                </option>
              ))}
            </select>
          ) : (
            <input
              type={field.kind === "datetime" ? "datetime-local" : "search"}
              name={field.name}
              value={field.value ?? ""}
              placeholder={field.kind === "text" ? field.placeholder : undefined}
            />
          )}
        </label>
      ))}
      <button type="submit" class="button">
        {props.submitLabel ?? "Filter"}
      </button>
    </form>
  );
}
