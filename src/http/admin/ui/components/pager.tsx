/** Previous / next links that keep the current filters. `page` is 1-based. */
export function Pager(props: {
  path: string;
  query: Record<string, string | undefined>;
  page: number;
  hasNext: boolean;
}) {
  const link = (page: number) => {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(props.query)) if (v && k !== "page") params.set(k, v);
    params.set("page", String(page));
    return `${props.path}?${params.toString()}`;
  };
  if (props.page <= 1 && !props.hasNext) return null;
  return (
    <nav class="pager" aria-label="Pages">
      {props.page > 1 ? <a href={link(props.page - 1)}>← Newer</a> : <span />}
      <span>Page {props.page}</span>
      {props.hasNext ? <a href={link(props.page + 1)}>Older →</a> : <span />}
    </nav>
  );
}
