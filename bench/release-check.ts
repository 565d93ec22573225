/**
 * The release check of CPU per request (issue 35; docs/releasing.md): bench:scim against the
 * previous release, in one process run by run, several times with the order alternated (the
 * previous release first, then this tree first, …), and the median of each scenario's ratio of the
 * service's CPU per request (this tree ÷ the previous release). Prints the ratios as the lines the
 * CHANGELOG records, with the machine's cores and load; judges them: the median at most 1.05× for
 * GET and POST, and at most 1.10× for every scenario. Exit 0 when they hold, 1 when not, 2 when
 * the bench could not run (no previous release tagged, a run that failed).
 *
 *   npm run release:check [-- --baseline previous-release --runs 3 --users 2000 --seconds 3 --only get,post,put]
 */
import { spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const USAGE = `npm run release:check [-- OPTIONS]

  --baseline REF  the release to compare with: previous-release (default: the newest tag reachable
                  from HEAD that is not on HEAD; without tags, the last commit that set
                  package.json's version), a tag or a commit
  --runs N        bench:scim runs, the order alternated between them (default 3)
  --users N       users stored (default 2000)
  --seconds N     seconds per scenario (default 3)
  --only LIST     scenarios (default get,post,put)
  --help          this text`;

const { values } = parseArgs({
  options: {
    baseline: { type: "string", default: "previous-release" },
    runs: { type: "string", default: "3" },
    users: { type: "string", default: "2000" },
    seconds: { type: "string", default: "3" },
    only: { type: "string", default: "get,post,put" },
    help: { type: "boolean", default: false },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const RUNS = Number(values.runs);
if (!Number.isInteger(RUNS) || RUNS < 1) {
  console.error(`--runs: a whole number of runs, at least 1\n\n${USAGE}`);
  process.exit(2);
}
/** The gate (issue 35): the median ratio for these scenarios, and for any. */
const LIMITS = { gated: ["get", "post"], gatedMax: 1.05, anyMax: 1.1 };

type Figures = { key: string; name: string; requests: number; serverCpuMs: number };
type BenchJson = {
  codes: string[];
  loadAverage: number[];
  cores: number;
  runs: { code: string; users: number; workers: boolean; results: Figures[]; load: number[] }[];
};

const here = path.dirname(fileURLToPath(import.meta.url));
const dir = await mkdtemp(path.join(os.tmpdir(), "scim-release-check-"));
const ratios = new Map<string, { name: string; ratios: number[]; old: number[]; new: number[] }>();
let baselineLabel = values.baseline;
const loads: number[] = [];
try {
  for (let i = 0; i < RUNS; i++) {
    const json = path.join(dir, `run-${i}.json`);
    const newFirst = i % 2 === 1;
    console.log(`\nrun ${i + 1} of ${RUNS}: ${newFirst ? "this tree first" : `${values.baseline} first`}`);
    const args = [
      "tsx",
      path.join(here, "scim-throughput.ts"),
      "--baseline",
      values.baseline,
      "--workers",
      "off",
      "--users",
      values.users,
      "--seconds",
      values.seconds,
      "--only",
      values.only,
      "--json",
      json,
      ...(newFirst ? ["--new-first"] : []),
    ];
    // The bench's own exit code judges this tree against issue 16's absolute targets: not this
    // check's question, so only a run without figures stops it.
    const run = spawnSync("npx", args, { stdio: "inherit" });
    const figures = await readFile(json, "utf8").catch(() => undefined);
    if (figures === undefined) {
      console.error(`release:check: bench:scim run ${i + 1} wrote no figures (exit ${run.status}): nothing to compare`);
      process.exit(2);
    }
    const bench = JSON.parse(figures) as BenchJson;
    baselineLabel = bench.codes.find((c) => c.startsWith("old "))?.slice("old ".length) ?? baselineLabel;
    for (const r of bench.runs) loads.push(r.load[0] ?? NaN);
    const old = bench.runs.find((r) => r.code === "old");
    const now = bench.runs.find((r) => r.code === "new");
    if (!old || !now) throw new Error("bench:scim ran without its baseline");
    for (const r of now.results) {
      const before = old.results.find((o) => o.key === r.key);
      if (!before || !(before.serverCpuMs > 0) || !(r.serverCpuMs > 0)) continue; // not measured (no /proc)
      const entry = ratios.get(r.key) ?? { name: r.name, ratios: [], old: [], new: [] };
      entry.ratios.push(r.serverCpuMs / before.serverCpuMs);
      entry.old.push(before.serverCpuMs);
      entry.new.push(r.serverCpuMs);
      ratios.set(r.key, entry);
    }
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
if (ratios.size === 0) {
  console.error("release:check: no scenario's CPU per request was measured (this needs Linux's /proc)");
  process.exit(2);
}
let failed = false;
const lines: string[] = [];
for (const [key, e] of ratios) {
  const m = median(e.ratios);
  const limit = LIMITS.gated.includes(key) ? LIMITS.gatedMax : LIMITS.anyMax;
  const ok = m <= limit;
  if (!ok) failed = true;
  lines.push(
    `  - ${e.name}: ${m.toFixed(2)}× (runs ${e.ratios.map((r) => r.toFixed(2)).join(", ")}; ms of service CPU per request, median: ${median(e.old).toFixed(3)} → ${median(e.new).toFixed(3)})${ok ? "" : ` — over ${limit.toFixed(2)}×`}`,
  );
}
const load = loads.filter(Number.isFinite);
console.log(`\nFor the CHANGELOG (this release's section, under its notes):\n`);
console.log(
  `- CPU per request against ${baselineLabel} (\`npm run release:check\`: bench:scim, ${Number(values.users).toLocaleString("en")} users, workers off, ${values.seconds} s a scenario, ${RUNS} runs in alternating order, median of this release ÷ ${baselineLabel}; Node ${process.versions.node}, ${os.cpus().length} cores, load average ${Math.min(...load).toFixed(1)}–${Math.max(...load).toFixed(1)} before the runs):`,
);
for (const line of lines) console.log(line);
console.log(
  `\n${failed ? "FAILED" : "OK"}: the median at most ${LIMITS.gatedMax}× for ${LIMITS.gated.join(" and ")}, at most ${LIMITS.anyMax}× for every scenario`,
);
process.exitCode = failed ? 1 : 0;
