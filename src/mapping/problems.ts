import { isMap, isScalar, type Document, type LineCounter, type Node } from "yaml";
import { ConfigError } from "../config/env.js";

/**
 * Mapping-file problems, each pinned to a line and column of the file and phrased with the fix,
 * like a compiler: `config/mapping.yaml:12:5: unknown key 'workspace': did you mean 'workspaces'?`.
 * MappingError extends ConfigError so boot prints it the same way as a bad environment.
 */

export type MappingProblem = { source: string; line: number; column: number; message: string };

function formatProblem(p: MappingProblem): string {
  return `${p.source}:${p.line}:${p.column}: ${p.message}`;
}

export class MappingError extends ConfigError {
  constructor(readonly mappingProblems: MappingProblem[]) {
    super(mappingProblems.map(formatProblem));
    this.name = "MappingError";
    this.message = `Mapping file is invalid (${mappingProblems.length} problem${mappingProblems.length === 1 ? "" : "s"}):\n${this.problems
      .map((p) => `  - ${p}`)
      .join("\n")}`;
  }
}

type Path = readonly (string | number)[];

/** Finds where a path of the document starts; falls back to the nearest ancestor that exists. */
export class Locator {
  constructor(
    private readonly doc: Document,
    private readonly lines: LineCounter,
    private readonly source: string,
  ) {}

  problem(path: Path, message: string): MappingProblem {
    return this.at(this.offsetOf(path), message);
  }

  /** Points at the key itself (for unknown or misspelt keys) rather than at its value. */
  keyProblem(mapPath: Path, key: string, message: string): MappingProblem {
    const map = mapPath.length === 0 ? this.doc.contents : this.doc.getIn(mapPath, true);
    if (isMap(map)) {
      const pair = map.items.find((item) => isScalar(item.key) && String(item.key.value) === key);
      const keyNode = pair?.key as Node | undefined;
      if (keyNode?.range) return this.at(keyNode.range[0], message);
    }
    return this.problem(mapPath, message);
  }

  /** 1-based line where the path starts. */
  lineOf(path: Path): number {
    return this.lines.linePos(this.offsetOf(path)).line;
  }

  at(offset: number, message: string): MappingProblem {
    const { line, col } = this.lines.linePos(offset);
    return { source: this.source, line, column: col, message };
  }

  private offsetOf(path: Path): number {
    for (let depth = path.length; depth >= 0; depth--) {
      const node = (depth === 0 ? this.doc.contents : this.doc.getIn(path.slice(0, depth), true)) as
        Node | null | undefined;
      if (node && typeof node === "object" && "range" in node && node.range) return node.range[0];
    }
    return 0;
  }
}

/** The closest candidate by edit distance, when it is close enough to be a likely typo. */
export function didYouMean(given: string, candidates: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  const lower = given.toLowerCase();
  for (const candidate of candidates) {
    const c = candidate.toLowerCase();
    // Plural/singular and case slips are the common mistakes; treat them as near.
    const distance =
      c === lower
        ? 0
        : c.startsWith(lower) || lower.startsWith(c)
          ? Math.abs(c.length - lower.length)
          : editDistance(lower, c);
    if (!best || distance < best.distance) best = { name: candidate, distance };
  }
  if (!best) return undefined;
  return best.distance <= Math.max(2, Math.floor(given.length / 3)) ? best.name : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** "rules[2].workspaces[0].teams[1]" read as people say it: "rule 3, workspace 1, team 2". */
export function describePath(path: Path): string {
  const parts: string[] = [];
  for (let i = 0; i < path.length; i++) {
    const key = path[i];
    const next = path[i + 1];
    if (typeof next === "number" && typeof key === "string") {
      parts.push(`${singular(key)} ${next + 1}`);
      i++;
    } else if (typeof key === "number") {
      parts.push(`item ${key + 1}`);
    } else {
      parts.push(String(key));
    }
  }
  return parts.join(", ");
}

function singular(key: string): string {
  const names: Record<string, string> = { rules: "rule", workspaces: "workspace", teams: "team", groups: "group" };
  return names[key] ?? key;
}
