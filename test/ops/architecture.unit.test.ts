import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * docs/ARCHITECTURE.md, checked two ways. Its rules ("Rules, and what checks each") that lint does
 * not check are checked here, each by its own test below, on the code itself; the layer diagram is
 * compared with the rows of .dependency-cruiser.cjs, which `npm run lint:deps` holds the code to.
 *
 * And it names paths, identifiers, settings and scripts in backticks; each must still
 * exist, or the document says something false. A path is read from the repository root, then from
 * src/ and from the folders its section or table row names; an identifier must appear in the module
 * its table row names (or, outside a row about one module, anywhere in src/); a setting or constant
 * (UPPER_CASE) must appear in src/; `npm run X` must be a script of package.json. Backticked text of
 * any other shape (commands, the `/scim/v2` routes) is not checked, and counted apart.
 */

const root = path.resolve(import.meta.dirname, "../..");
const doc = readFileSync(path.join(root, "docs/ARCHITECTURE.md"), "utf8");
const scripts = Object.keys(
  (JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as { scripts: object }).scripts,
);

const sourceFiles = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? sourceFiles(full) : /\.(ts|tsx|mjs)$/.test(name) ? [full] : [];
  });
const sources = new Map(
  sourceFiles(path.join(root, "src")).map((file) => [path.relative(root, file), readFileSync(file, "utf8")]),
);
const allSource = [...sources.values()].join("\n");

/** The code of a file without its comments (a `//` after `:` is a URL, kept). */
const code = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:])\/\/.*$/gm, "$1");

/** The files of src/ whose code (comments left out) matches, outside the given folders and files. */
function filesMatching(pattern: RegExp, allowed: string[] = []): string[] {
  return [...sources]
    .filter(([file]) => !allowed.some((a) => file === a || (a.endsWith("/") && file.startsWith(a))))
    .filter(([, text]) => pattern.test(code(text)))
    .map(([file]) => file);
}

const PATH = /^[\w.-]*(\/[\w.-]*)*(\.(ts|tsx|mjs|cjs|js|jsonc?|md|ya?ml)|\/)$/;
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const CONSTANT = /^[A-Z][A-Z0-9_]+$/;
const word = (name: string) => new RegExp(`(?<![\\w$])${name.replace(/\$/g, "\\$")}(?![\\w$])`);

/** Where a path may be read from: the root, src/, and the folders the section and the row name. */
function resolvePath(name: string, bases: string[]): string | undefined {
  for (const base of ["", "src", ...bases]) {
    const full = path.join(root, base, name);
    if (existsSync(full)) return full;
  }
  return undefined;
}

type Verdict = { span: string; line: number; problem?: string };

function check(): { verdicts: Verdict[]; unchecked: string[] } {
  const verdicts: Verdict[] = [];
  const unchecked: string[] = [];
  let sectionBases: string[] = [];
  let fenced = false;
  doc.split("\n").forEach((text, index) => {
    const line = index + 1;
    if (text.startsWith("```")) fenced = !fenced;
    if (fenced) return;
    const spans = [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    if (text.startsWith("#")) sectionBases = spans.filter((s) => s.endsWith("/"));
    // A table row about one module: its first cell's path; the row's identifiers must be in it.
    const cells = text.startsWith("|") ? text.split("|").slice(1, -1) : [];
    const rowSubject = /^\s*`([^`]+)`\s*$/.exec(cells[0] ?? "")?.[1];
    const rowFile = rowSubject && PATH.test(rowSubject) ? resolvePath(rowSubject, sectionBases) : undefined;
    const rowDir = rowFile && (statSync(rowFile).isFile() ? path.dirname(rowFile) : rowFile);
    const bases = [...sectionBases, ...(rowDir ? [path.relative(root, rowDir)] : [])];
    for (const span of spans) {
      if (
        (PATH.test(span) && (span.includes("/") || span.includes("."))) ||
        /^(src|test|docs|bench)\/[\w./-]+$/.test(span)
      ) {
        verdicts.push({ span, line, ...(resolvePath(span, bases) ? {} : { problem: "no such path" }) });
      } else if (span.startsWith("npm run ") || span === "npm start") {
        const script = span === "npm start" ? "start" : span.slice("npm run ".length);
        verdicts.push({ span, line, ...(scripts.includes(script) ? {} : { problem: "no such npm script" }) });
      } else if (CONSTANT.test(span)) {
        verdicts.push({ span, line, ...(word(span).test(allSource) ? {} : { problem: "not in src/" }) });
      } else if (IDENTIFIER.test(span)) {
        const inRowFile = rowFile && statSync(rowFile).isFile() && rowSubject !== span;
        const where = inRowFile ? readFileSync(rowFile, "utf8") : allSource;
        const problem = inRowFile ? `not in ${path.relative(root, rowFile)}` : "not in src/";
        verdicts.push({ span, line, ...(word(span).test(where) ? {} : { problem }) });
      } else unchecked.push(span);
    }
  });
  return { verdicts, unchecked };
}

describe("docs/ARCHITECTURE.md", () => {
  it("names only paths, identifiers, settings and scripts that exist", () => {
    const { verdicts, unchecked } = check();
    const wrong = verdicts.filter((v) => v.problem).map((v) => `line ${v.line}: \`${v.span}\` ${v.problem}`);
    expect(wrong).toEqual([]);
    // Not vacuous: the document names well over a hundred things, nearly all of them checked.
    expect(verdicts.length).toBeGreaterThan(150);
    expect(unchecked.length).toBeLessThan(verdicts.length / 10);
  });
});

/** The rows of the diagram in "Layers", top to bottom, each the src/ paths it names. */
function diagramRows(): string[][] {
  const section = doc.slice(doc.indexOf("## Layers"));
  const fence = section.slice(section.indexOf("```") + 3, section.indexOf("```", section.indexOf("```") + 3));
  return fence
    .split(/^.*▼.*$/m)
    .map((row) => [...row.matchAll(/\bsrc\/[\w./]+/g)].map((m) => m[0]))
    .filter((row) => row.length > 0);
}

/** A file the entry stands for: `src/db` → `src/db/x.ts`, `src/ids.ts` → itself. */
const sampleOf = (entry: string) =>
  statSync(path.join(root, entry)).isDirectory() ? `${entry.replace(/\/$/, "")}/x.ts` : entry;

type LayerRule = { name: string; from: { path: string }; to: { path: string } };
const layerRules = (
  createRequire(import.meta.url)(path.join(root, ".dependency-cruiser.cjs")) as { forbidden: LayerRule[] }
).forbidden.filter((rule) => rule.name.startsWith("layer-"));

describe("docs/ARCHITECTURE.md's rules", () => {
  it("the layer diagram is the rows of .dependency-cruiser.cjs, and every part of src/ is in one row", () => {
    const rows = diagramRows();
    expect(rows.length).toBeGreaterThan(8);
    const placed = rows.flat().map((entry) => entry.replace(/\/$/, ""));
    const parts = readdirSync(path.join(root, "src")).map((name) => `src/${name}`);
    expect([...placed].sort()).toEqual([...parts].sort());
    expect(layerRules).toHaveLength(rows.length - 1);
    const wrong: string[] = [];
    rows.forEach((row, index) => {
      for (const entry of row) {
        const sample = sampleOf(entry);
        const rules = layerRules.filter((rule) => new RegExp(rule.from.path).test(sample));
        if (index === 0) {
          if (rules.length) wrong.push(`${entry}: top row, yet ${rules[0]!.name} limits it`);
          continue;
        }
        if (rules.length !== 1) {
          wrong.push(`${entry}: ${rules.length} layer rules instead of one`);
          continue;
        }
        const to = new RegExp(rules[0]!.to.path);
        rows.forEach((other, otherIndex) => {
          for (const target of other) {
            const refused = to.test(sampleOf(target));
            if (refused !== otherIndex < index)
              wrong.push(`${entry} → ${target}: ${rules[0]!.name} ${refused ? "refuses" : "allows"} it`);
          }
        });
      }
    });
    expect(wrong).toEqual([]);
  });

  it("SQL only in src/db: no SQL text and no query() on a literal elsewhere in src/", () => {
    const sqlText = /["'`]\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\s|\b(INSERT INTO|DELETE FROM|ON CONFLICT)\b/;
    const queryCall = /\.(query|execute)(<[^>]*>)?\(\s*["'`]/;
    expect(filesMatching(sqlText, ["src/db/"])).toEqual([]);
    expect(filesMatching(queryCall, ["src/db/"])).toEqual([]);
    // Not vacuous: src/db's repositories match both.
    expect(filesMatching(sqlText).length).toBeGreaterThan(20);
    expect(filesMatching(queryCall).length).toBeGreaterThan(20);
  });

  it('src/http imports nothing from src/db, types included (import type, import("…") in a type)', () => {
    const fromDb = /(\bfrom\s*|\bimport\s*\(\s*)["'](\.\.\/)+db\//;
    expect(filesMatching(fromDb).filter((file) => file.startsWith("src/http/"))).toEqual([]);
    // Not vacuous: the layers below src/db's callers match.
    expect(filesMatching(fromDb).length).toBeGreaterThan(20);
  });

  it("every table is written from one folder of src/db, its owner; others only read it", () => {
    const write = /\b(?:INSERT INTO|UPDATE|DELETE FROM)\s+([a-z_]+)\b/g;
    const owners = new Map<string, Set<string>>();
    for (const [file, text] of sources) {
      if (!file.startsWith("src/db/")) continue;
      const folder = path.dirname(file) === "src/db" ? file : path.dirname(file);
      for (const [, table] of code(text).matchAll(write)) {
        if (!owners.has(table!)) owners.set(table!, new Set());
        owners.get(table!)!.add(folder);
      }
    }
    const shared = [...owners].filter(([, folders]) => folders.size > 1).map(([t, f]) => `${t}: ${[...f].join(", ")}`);
    expect(shared).toEqual([]);
    // Not vacuous: the queue, the ledger and the IdP's users are among the tables found.
    expect([...owners.keys()]).toEqual(expect.arrayContaining(["reconcile_queue", "budget_debits", "idp_users"]));
    expect(owners.size).toBeGreaterThan(30);
  });

  it("no folder of src/ holds more than 22 files side by side", () => {
    const perFolder = new Map<string, number>();
    for (const file of sources.keys()) perFolder.set(path.dirname(file), (perFolder.get(path.dirname(file)) ?? 0) + 1);
    expect([...perFolder].filter(([, n]) => n > 22).map(([folder, n]) => `${folder}: ${n}`)).toEqual([]);
    expect(Math.max(...perFolder.values())).toBeGreaterThan(10);
  });

  it("the environment is parsed once: loadEnv is called in cli/cli.ts only", () => {
    expect(filesMatching(/\bloadEnv\(/, ["src/config/"])).toEqual(["src/cli/cli.ts"]);
  });

  it("only reconcile/budget/budgetLedger.ts debits the budget", () => {
    // One INSERT into the ledger, in the repository; its one caller is the ledger's decision.
    expect(filesMatching(/INSERT INTO budget_debits/)).toEqual(["src/db/reconcile/budgetRepository.ts"]);
    expect(filesMatching(/\binsertDebit\b/, ["src/db/reconcile/budgetRepository.ts"])).toEqual([
      "src/reconcile/budget/budgetLedger.ts",
    ]);
  });

  it("the platform is called through platform/transport.ts only (fetch elsewhere: the webhooks)", () => {
    const globalFetch = /(?<![\w$.])fetch(?![\w$?:])/;
    const withoutTypeof = (pattern: RegExp) => new RegExp(`(?<!typeof )${pattern.source}`);
    expect(filesMatching(withoutTypeof(globalFetch)).sort()).toEqual([
      "src/notify/channels.ts",
      "src/platform/transport.ts",
    ]);
  });

  it("platform events are stored by platformRecord/importer.ts only", () => {
    expect(filesMatching(/\binsertEvents\b/, ["src/db/platform/eventRepository.ts"])).toEqual([
      "src/platformRecord/importer.ts",
    ]);
  });

  it("an admin's role is read only by can (src/policy.ts), compared nowhere else", () => {
    const compared = /\.role\s*[!=]==\s*["'`]|["'`]\s*[!=]==\s*[\w.!]*\.role\b|switch\s*\([^)]*\brole\)/;
    expect(filesMatching(compared, ["src/policy.ts"])).toEqual([]);
    expect(filesMatching(/\bcan\([\w.!]*\.role\b/).length).toBeGreaterThan(5);
  });
});
