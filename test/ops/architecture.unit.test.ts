import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * docs/ARCHITECTURE.md names paths, identifiers, settings and scripts in backticks; each must still
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
const allSource = sourceFiles(path.join(root, "src"))
  .map((file) => readFileSync(file, "utf8"))
  .join("\n");

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
