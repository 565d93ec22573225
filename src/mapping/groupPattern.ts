import vm from "node:vm";
import { MappingError, type MappingProblem } from "./problems.js";

/**
 * A rule's `groupPattern`: a JavaScript regular expression, compiled case-insensitively, that must
 * never stop the event loop it runs on (SCIM, /oauth/token and the admin UI share it; a draft's
 * pattern ran there for every group of every user in a preview, issue 45). Two layers:
 *
 * 1. `backtrackingHazard` refuses, wherever a mapping is read (boot, reload, `mapping check`, the
 *    preview), the shapes that make a backtracking engine exponential: a repeated group that itself
 *    repeats a variable amount (`(a+)+`, `(.*){11}`), a repeated group with alternatives
 *    (`(a|ab)*`), and backreferences. The message names the pattern and its line.
 * 2. What passes still runs under a time limit (`compileGroupPattern`): each test runs in a
 *    `vm` script with a `timeout`, which V8 can interrupt inside a regular expression. A pattern
 *    that twice spends the limit in CPU (a polynomial blow-up the shapes above do not catch, such
 *    as eight `.*` in a row against a long name) is refused from then on, naming it: its slowness
 *    holds the loop about 2 × MATCH_TIME_LIMIT_MS in all. The limit is wall-clock, so an attempt
 *    that timed out having used little CPU (the process was starved, not the pattern slow) is tried
 *    again, up to ATTEMPTS; a name starved on every attempt fails that test only, and a second such
 *    name refuses the pattern, so one test holds the loop at most ATTEMPTS × the limit. Results are
 *    cached by group name, as the vm call costs about 0.1 ms and a directory has far fewer group
 *    names than users × rules.
 *
 * Why not RE2: a linear-time engine would need a new runtime dependency (the native `re2` downloads
 * binaries from outside the registry; `re2js` and `re2-wasm` are not dependencies of this project),
 * and RE2 refuses lookarounds that mappings in use may contain, changing what they mean. This keeps
 * JavaScript's semantics for every pattern that loads, and bounds what any of them costs.
 */

export type GroupPattern = { readonly source: string; test(name: string): boolean };

/** The longest one attempt may hold the event loop. */
export const MATCH_TIME_LIMIT_MS = 100;
/** Attempts per group name; two that spend the limit in CPU refuse the pattern. */
const ATTEMPTS = 4;
/** Group names remembered per pattern; the cache starts over when full. */
const CACHED_NAMES = 20_000;

const sandbox = vm.createContext({ pattern: /(?:)/, name: "" });
const testInSandbox = new vm.Script("pattern.test(name)");

/** Why `pattern` (valid JavaScript, as checks.ts verified) may backtrack catastrophically; undefined when it may not. */
export function backtrackingHazard(pattern: string): string | undefined {
  try {
    new Shapes(pattern).sequence();
    return undefined;
  } catch (error) {
    if (error instanceof Hazard) return error.message;
    throw error;
  }
}

/** `pattern` compiled case-insensitively, tested under the time limit; `at` names it in the refusal. */
export function compileGroupPattern(pattern: string, at: MappingProblem): GroupPattern {
  const regex = new RegExp(pattern, "i");
  const seen = new Map<string, boolean>();
  let refused: MappingError | undefined;
  let slowAttempts = 0;
  let starvedNames = 0;
  return {
    source: regex.source,
    test(name: string): boolean {
      if (refused) throw refused;
      const known = seen.get(name);
      if (known !== undefined) return known;
      for (let attempt = 0; attempt < ATTEMPTS && slowAttempts < 2; attempt++) {
        const matched = testInTime(regex, name);
        if (matched === "slow") slowAttempts++;
        else if (matched !== "starved") {
          if (seen.size >= CACHED_NAMES) seen.clear();
          seen.set(name, matched);
          return matched;
        }
      }
      const problem = { ...at, message: `groupPattern '${pattern}' took longer than ${MATCH_TIME_LIMIT_MS} ms` };
      // Starved twice over, it is refused anyway: what a pattern may cost the loop stays bounded.
      if (slowAttempts < 2 && ++starvedNames < 2)
        throw new MappingError([
          { ...problem, message: `${problem.message} (the process is short of CPU): try again` },
        ]);
      refused = new MappingError([
        {
          ...problem,
          message: `${problem.message} on the group name '${name.slice(0, 80)}' and is refused: write it without repeated wildcards in a row (e.g. '.*' once)`,
        },
      ]);
      throw refused;
    },
  };
}

/**
 * Whether `regex` matches `name`; when it ran out of time, "slow" if it spent at least half the
 * limit in CPU, else "starved" (the process did not get the CPU: nothing to hold against the pattern).
 */
function testInTime(regex: RegExp, name: string): boolean | "slow" | "starved" {
  const cpu = process.cpuUsage();
  try {
    sandbox.pattern = regex;
    sandbox.name = name;
    return testInSandbox.runInContext(sandbox, { timeout: MATCH_TIME_LIMIT_MS }) as boolean;
  } catch (error) {
    if ((error as { code?: string }).code !== "ERR_SCRIPT_EXECUTION_TIMEOUT") throw error;
    const used = process.cpuUsage(cpu);
    return (used.user + used.system) / 1000 >= MATCH_TIME_LIMIT_MS / 2 ? "slow" : "starved";
  } finally {
    sandbox.name = "";
  }
}

class Hazard extends Error {}

const NESTED =
  "a repeated group repeats inside (as in (a+)+ or (.*){11}), which can take exponential time on a group name that almost matches: repeat once, e.g. '^.*#$'";
const ALTERNATIVES =
  "a repeated group holds alternatives (as in (a|ab)*), which can take exponential time: use a character class ([ab]+) or list the names in `groups:`";
const BACKREFERENCE = "backreferences (\\1, \\k<name>) can take exponential time: match the name without them";

/** What a sub-pattern contains, as far as the hazards go. */
type Shape = { varies: boolean; alternates: boolean };

/** A recursive descent over JavaScript's pattern syntax (non-unicode mode), tracking shapes only. */
class Shapes {
  private i = 0;
  constructor(private readonly p: string) {}

  /** Alternatives up to the closing parenthesis of the current group (or the end). */
  sequence(): Shape {
    const shape: Shape = { varies: false, alternates: false };
    while (this.i < this.p.length && this.p[this.i] !== ")") {
      if (this.p[this.i] === "|") {
        shape.alternates = true;
        this.i++;
        continue;
      }
      const atom = this.atom();
      const q = this.quantifier();
      if (q && q.max > 1) {
        if (atom.varies) throw new Hazard(NESTED);
        if (atom.alternates) throw new Hazard(ALTERNATIVES);
      }
      shape.varies ||= atom.varies || (q !== undefined && q.max > 1 && q.min !== q.max);
      shape.alternates ||= atom.alternates;
    }
    return shape;
  }

  private atom(): Shape {
    const leaf = { varies: false, alternates: false };
    const c = this.p[this.i]!;
    if (c === "(") {
      this.i++;
      if (this.p[this.i] === "?") {
        // (?: (?= (?! (?<= (?<! (?<name>
        const prefix = /^\?(?::|=|!|<=|<!|<[^>]*>)/.exec(this.p.slice(this.i));
        this.i += prefix ? prefix[0].length : 1;
      }
      const inner = this.sequence();
      this.i++; // ")"
      return inner;
    }
    if (c === "[") {
      this.i++;
      if (this.p[this.i] === "^") this.i++;
      while (this.i < this.p.length && this.p[this.i] !== "]") this.i += this.p[this.i] === "\\" ? 2 : 1;
      this.i++;
      return leaf;
    }
    if (c === "\\") {
      const next = this.p[this.i + 1] ?? "";
      if (/[1-9]/.test(next) || (next === "k" && this.p[this.i + 2] === "<")) throw new Hazard(BACKREFERENCE);
      this.i += 2;
      return leaf;
    }
    this.i++;
    return leaf;
  }

  private quantifier(): { min: number; max: number } | undefined {
    const c = this.p[this.i];
    let q: { min: number; max: number } | undefined;
    if (c === "*") q = { min: 0, max: Infinity };
    else if (c === "+") q = { min: 1, max: Infinity };
    else if (c === "?") q = { min: 0, max: 1 };
    if (q) this.i++;
    else if (c === "{") {
      const braces = /^\{(\d+)(,(\d*))?\}/.exec(this.p.slice(this.i));
      if (!braces) return undefined; // a literal "{"
      const min = Number(braces[1]);
      q = { min, max: braces[2] === undefined ? min : braces[3] ? Number(braces[3]) : Infinity };
      this.i += braces[0].length;
    } else return undefined;
    if (this.p[this.i] === "?") this.i++; // lazy
    return q;
  }
}
