/**
 * The admin UI's one stylesheet, served from /admin/assets/admin.css. Kept in a module (not a
 * .css file) so that a compiled build carries it without a copy step. System fonts only.
 */
export const ADMIN_CSS = `
:root {
  --ink: #1d2330; --muted: #5b6475; --line: #d9dee7; --bg: #f5f7fa; --card: #fff;
  --accent: #2457c5; --good: #1f7a44; --warn: #a15c00; --bad: #b42318; --info: #2457c5;
  --used: #2457c5; --reserve: #e3a008; --track: #e6eaf0;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  font-size: 15px; line-height: 1.45; color: var(--ink); background: var(--bg);
}
* { box-sizing: border-box; }
body { margin: 0; }
a { color: var(--accent); }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.92em; }
h1 { font-size: 1.5rem; margin: 0 0 1rem; }
h2 { font-size: 1.1rem; margin: 0 0 0.75rem; }
.topbar { display: flex; align-items: center; gap: 1.5rem; padding: 0 1.5rem; background: #16213a; color: #fff; min-height: 52px; flex-wrap: wrap; }
.topbar .brand { color: #fff; font-weight: 700; text-decoration: none; }
.topbar nav ul { display: flex; gap: 0.25rem; list-style: none; margin: 0; padding: 0; flex-wrap: wrap; }
.topbar nav a { color: #c9d4ea; text-decoration: none; padding: 0.9rem 0.6rem; display: block; border-bottom: 3px solid transparent; }
.topbar nav a:hover { color: #fff; }
.topbar nav a[aria-current="page"] { color: #fff; border-bottom-color: #7aa2ff; }
.who { margin-left: auto; display: flex; align-items: center; gap: 0.6rem; }
.who-name { color: #e5ebf7; }
.link-button { background: none; border: 1px solid #5a6b90; color: #fff; border-radius: 4px; padding: 0.25rem 0.6rem; cursor: pointer; font: inherit; }
main { padding: 1.5rem; max-width: 1280px; margin: 0 auto; }
main.narrow { max-width: 460px; margin: 8vh auto; background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 2rem; }
body.simple .brand { color: var(--muted); font-weight: 700; margin: 0 0 0.5rem; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(340px, 1fr)); gap: 1rem; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 1rem 1.25rem; margin-bottom: 1rem; }
.stat { font-size: 1.6rem; font-weight: 700; }
.badge { display: inline-block; padding: 0.05rem 0.5rem; border-radius: 999px; font-size: 0.8rem; font-weight: 600; border: 1px solid transparent; }
.badge-neutral { background: #eef1f5; color: var(--ink); }
.badge-good { background: #e3f4ea; color: var(--good); }
.badge-warn { background: #fdf1dc; color: var(--warn); }
.badge-bad { background: #fde7e5; color: var(--bad); }
.badge-info { background: #e6eefc; color: var(--info); }
.badge-role-admin { background: #ffe8b3; color: #5c3b00; }
.badge-role-viewer { background: #dfe7f7; color: #1d2f5c; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; background: var(--card); }
th, td { text-align: left; padding: 0.45rem 0.6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: 0.85rem; color: var(--muted); font-weight: 600; background: #fafbfd; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.nowrap { white-space: nowrap; }
tbody tr:hover { background: #f8faff; }
.filters { display: flex; flex-wrap: wrap; gap: 0.75rem; align-items: flex-end; margin-bottom: 1rem; }
.filters label { display: flex; flex-direction: column; font-size: 0.85rem; color: var(--muted); gap: 0.2rem; }
input, select, textarea { font: inherit; padding: 0.4rem 0.5rem; border: 1px solid #b9c1cf; border-radius: 4px; background: #fff; color: var(--ink); }
textarea { width: 100%; min-height: 14rem; font-family: ui-monospace, Menlo, Consolas, monospace; }
.button { font: inherit; background: var(--accent); color: #fff; border: 0; border-radius: 4px; padding: 0.45rem 0.9rem; cursor: pointer; }
.button:disabled { background: #9aa6bd; cursor: not-allowed; }
.button.danger { background: var(--bad); }
.button.secondary { background: #fff; color: var(--accent); border: 1px solid var(--accent); }
.inline-form { display: inline; }
.stack > * + * { margin-top: 0.75rem; }
.form-row { display: flex; flex-direction: column; gap: 0.3rem; margin-bottom: 1rem; }
.form-row label { font-weight: 600; }
.message { font-size: 1.05rem; }
.flash { padding: 0.6rem 0.9rem; border-radius: 6px; }
.flash-ok { background: #e3f4ea; color: var(--good); }
.flash-error { background: #fde7e5; color: var(--bad); }
.no-data { color: var(--muted); font-style: italic; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.3rem 1rem; margin: 0; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; }
.pager { display: flex; justify-content: space-between; align-items: center; margin-top: 0.75rem; }
.gauge { margin: 0; }
.gauge-track { fill: var(--track); }
.gauge-used { fill: var(--used); }
.gauge-reserve { fill: var(--reserve); opacity: 0.75; }
.gauge figcaption { margin-top: 0.4rem; color: var(--muted); }
.chart { margin: 0; }
.chart-svg { max-width: 100%; height: auto; }
.chart-axis { stroke: #9aa6bd; }
.chart-label { font-size: 9px; fill: var(--muted); }
.chart-value { font-size: 9px; fill: var(--ink); }
.chart-s0 { fill: #b42318; } .chart-s1 { fill: #e3a008; } .chart-s2 { fill: #2457c5; }
.chart-s3 { fill: #1f7a44; } .chart-s4 { fill: #7a4cc2; } .chart-s5 { fill: #6b7280; }
.legend { display: flex; gap: 1rem; flex-wrap: wrap; font-size: 0.85rem; color: var(--muted); margin-top: 0.3rem; }
.diff td { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 0.88rem; }
details.bundle summary { cursor: pointer; } details.bundle code { display: block; white-space: normal; overflow-wrap: anywhere; }
.diff-sign { width: 1.5rem; text-align: center; font-weight: 700; }
.diff-added { background: #eaf7ef; }
.diff-removed { background: #fdecea; }
.diff-changed { background: #fff6e0; }
.diff-added .diff-sign { color: var(--good); } .diff-removed .diff-sign { color: var(--bad); } .diff-changed .diff-sign { color: var(--warn); }
.sso { display: block; text-align: center; text-decoration: none; padding: 0.6rem; }
.hint { color: var(--muted); font-size: 0.9rem; }
.plain-list { list-style: none; margin: 0; padding: 0; }
`;
