import type { ComponentChildren } from "preact";

/** Small building blocks shared by the pages. */

export type Tone = "neutral" | "good" | "warn" | "bad" | "info";

export function Badge(props: { tone?: Tone; children: ComponentChildren }) {
  return <span class={`badge badge-${props.tone ?? "neutral"}`}>{props.children}</span>;
}

/** Shown where a data source does not exist yet or returned nothing. */
export function NoData(props: { children?: ComponentChildren }) {
  return <p class="no-data">{props.children ?? "No data yet."}</p>;
}

export function CsrfField(props: { token: string }) {
  return <input type="hidden" name="_csrf" value={props.token} />;
}

/** A one-button POST form: the no-JavaScript way to run an action. */
export function ActionButton(props: {
  action: string;
  csrf: string;
  label: string;
  hidden?: Record<string, string>;
  danger?: boolean;
  disabled?: boolean;
}) {
  return (
    <form method="post" action={props.action} class="inline-form">
      <CsrfField token={props.csrf} />
      {Object.entries(props.hidden ?? {}).map(([name, value]) => (
        <input type="hidden" name={name} value={value} />
      ))}
      <button type="submit" class={props.danger ? "button danger" : "button"} disabled={props.disabled}>
        {props.label}
      </button>
    </form>
  );
}

export function Section(props: { title: string; children: ComponentChildren; id?: string }) {
  return (
    <section class="card" id={props.id}>
      <h2>{props.title}</h2>
      {props.children}
    </section>
  );
}

/** A term/value list for "one record" views. */
export function Facts(props: { items: [string, ComponentChildren][] }) {
  return (
    <dl class="facts">
      {props.items.map(([term, value]) => (
        <>
          <dt>{term}</dt>
          <dd>{value}</dd>
        </>
      ))}
    </dl>
  );
}

/** Times as every page writes them (src/admin/format.ts: the overview's ETA sentence uses it too). */
export { formatTime } from "../../../../admin/format.js";
