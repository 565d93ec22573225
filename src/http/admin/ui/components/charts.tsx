/**
 * Charts drawn as inline SVG: no JavaScript, no style attributes (the CSP forbids inline
 * styles), readable without colour thanks to the text labels beside them.
 */

export type BudgetGaugeData = {
  used: number;
  reserve: number;
  limit: number;
  resetsAt: Date | string;
  /** The SCIM limit the platform's answers announce, when one was seen. */
  platformAnnounced?: { limit: number } | null;
};

/** Today's budget as a horizontal bar: used, the reserve kept for deprovisions, what is left. */
export function BudgetGauge(props: BudgetGaugeData & { resetsLabel: string }) {
  const width = 400;
  const limit = Math.max(1, props.limit);
  const usedW = Math.min(width, (props.used / limit) * width);
  const reserveW = Math.min(width - usedW, (props.reserve / limit) * width);
  const free = Math.max(0, props.limit - props.used - props.reserve);
  const pct = Math.round((props.used / limit) * 100);
  return (
    <figure class="gauge">
      <svg
        viewBox={`0 0 ${width} 28`}
        preserveAspectRatio="none"
        width="100%"
        height="28"
        role="img"
        aria-label={`${props.used} of ${props.limit} calls used (${pct}%)`}
      >
        <rect class="gauge-track" x="0" y="0" width={width} height="28" rx="4" />
        <rect class="gauge-used" x="0" y="0" width={usedW} height="28" rx="4" />
        <rect class="gauge-reserve" x={width - reserveW} y="0" width={reserveW} height="28" />
      </svg>
      <figcaption>
        <strong>{props.used.toLocaleString("en")}</strong> of {props.limit.toLocaleString("en")} calls used ({pct}%) ·{" "}
        {free.toLocaleString("en")} free · {props.reserve.toLocaleString("en")} reserved for deprovisions · resets{" "}
        {props.resetsLabel}
        {props.platformAnnounced && props.platformAnnounced.limit !== props.limit ? (
          <p class="gauge-note">
            The platform announces {props.platformAnnounced.limit.toLocaleString("en")} calls a day; the connector
            spends {props.limit.toLocaleString("en")} (<code>PLATFORM_SCIM_DAILY_BUDGET</code>). Raise the setting only
            once your platform account confirms the higher limit.
          </p>
        ) : null}
      </figcaption>
    </figure>
  );
}

export type BarChartDay = { label: string; values: Record<string, number> };

/**
 * Stacked bars, one per day, one colour per series (CSS classes chart-s0…s5): by the series'
 * index, or by `colorOf` so that a series keeps its colour whichever others are present.
 */
export function StackedBarChart(props: {
  days: BarChartDay[];
  series: string[];
  title: string;
  colorOf?: (series: string, index: number) => number;
}) {
  const color = (s: string, si: number) => `chart-s${(props.colorOf?.(s, si) ?? si) % 6}`;
  const barW = 28;
  const gap = 10;
  const height = 160;
  const top = 14;
  const totals = props.days.map((d) => props.series.reduce((sum, s) => sum + (d.values[s] ?? 0), 0));
  const max = Math.max(1, ...totals);
  const width = props.days.length * (barW + gap) + gap;
  return (
    <figure class="chart">
      <svg
        viewBox={`0 0 ${width} ${height + 34}`}
        width={width * 1.4}
        height={(height + 34) * 1.4}
        class="chart-svg"
        role="img"
        aria-label={props.title}
      >
        <line class="chart-axis" x1="0" y1={height + top} x2={width} y2={height + top} />
        {props.days.map((day, i) => {
          const x = gap + i * (barW + gap);
          let y = height + top;
          return (
            <g>
              <title>{`${day.label}: ${totals[i]} calls`}</title>
              {props.series.map((s, si) => {
                const h = ((day.values[s] ?? 0) / max) * height;
                y -= h;
                return h > 0 ? <rect class={color(s, si)} x={x} y={y} width={barW} height={h} /> : null;
              })}
              <text class="chart-label" x={x + barW / 2} y={height + top + 14} text-anchor="middle">
                {day.label}
              </text>
              {totals[i] ? (
                <text class="chart-value" x={x + barW / 2} y={y - 3} text-anchor="middle">
                  {totals[i]}
                </text>
              ) : null}
            </g>
          );
        })}
      </svg>
      <figcaption class="legend">
        {props.series.map((s, si) => (
          <span>
            <svg width="12" height="12" aria-hidden="true">
              <rect class={color(s, si)} width="12" height="12" />
            </svg>{" "}
            {s}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}
