import { BadRequestError } from "../errors.js";

/**
 * RFC 7644 section 3.4.2.2 filters and section 3.5.2 PATCH paths, parsed into a small AST.
 * Written here rather than taken from scimmy because scimmy's parser flattens `not (a or b)`
 * into a different expression and accepts unquoted values; this one is strict and keeps the tree.
 *
 *   FILTER    = attrExp / logExp / valuePath / *1"not" "(" FILTER ")"
 *   valuePath = attrPath "[" valFilter "]"
 *   attrExp   = (attrPath SP "pr") / (attrPath SP compareOp SP compValue)
 *   PATH      = attrPath / valuePath [subAttr]
 */

export type CompareOp = "eq" | "ne" | "co" | "sw" | "ew" | "gt" | "ge" | "lt" | "le";
export type FilterValue = string | number | boolean | null;

export type Filter =
  | { kind: "compare"; path: string; op: CompareOp; value: FilterValue }
  | { kind: "present"; path: string }
  | { kind: "and" | "or"; left: Filter; right: Filter }
  | { kind: "not"; filter: Filter }
  | { kind: "valuePath"; path: string; filter: Filter };

export type PatchPath = { path: string; filter?: Filter; subAttribute?: string };

const COMPARE_OPS = new Set(["eq", "ne", "co", "sw", "ew", "gt", "ge", "lt", "le"]);
/** The longest filter or PATCH path accepted. */
export const MAX_FILTER_LENGTH = 4096;
const MAX_DEPTH = 16;
const MAX_TERMS = 64;

type Token = { kind: "word" | "string" | "(" | ")" | "[" | "]"; text: string; at: number };

const ATTR_PATH = /^(urn:[A-Za-z0-9.:_-]+:)?[A-Za-z$][\w$-]*(\.[A-Za-z$][\w$-]*)?$/i;
const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

function invalid(message: string): BadRequestError {
  return new BadRequestError(message, "invalidFilter");
}

/** Space, tab, newline, carriage return, the brackets and the quote: the characters a word ends at. */
const WORD_ENDS = new Set([...' \t\n\r()[]"'].map((c) => c.charCodeAt(0)));
const endsWord = (code: number) => WORD_ENDS.has(code);

function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const c = input[i]!;
    if (c === " " || c === "\t" || c === "\n" || c === "\r") {
      i++;
    } else if (c === "(" || c === ")" || c === "[" || c === "]") {
      tokens.push({ kind: c, text: c, at: i });
      i++;
    } else if (c === '"') {
      let j = i + 1;
      while (j < input.length && input[j] !== '"') j += input[j] === "\\" ? 2 : 1;
      if (j >= input.length) throw invalid(`Unterminated string starting at position ${i + 1}`);
      const literal = input.slice(i, j + 1);
      let text: string;
      try {
        text = JSON.parse(literal) as string;
      } catch {
        throw invalid(`Invalid string literal at position ${i + 1}`);
      }
      tokens.push({ kind: "string", text, at: i });
      i = j + 1;
    } else {
      let j = i;
      // Words end only at the whitespace skipped above: ending them at any other \s (U+00A0, U+FEFF)
      // made an empty word that never advanced, and the tokenizer looped until the heap ran out.
      while (j < input.length && !endsWord(input.charCodeAt(j))) j++;
      tokens.push({ kind: "word", text: input.slice(i, j), at: i });
      i = j;
    }
  }
  return tokens;
}

class Parser {
  private position = 0;
  private terms = 0;

  constructor(private readonly tokens: Token[]) {}

  parseFilter(depth = 0): Filter {
    if (depth > MAX_DEPTH) throw invalid("Filter is nested too deeply");
    let left = this.parseAnd(depth);
    while (this.peekKeyword("or")) {
      this.position++;
      left = { kind: "or", left, right: this.parseAnd(depth) };
    }
    return left;
  }

  private parseAnd(depth: number): Filter {
    let left = this.parseUnary(depth);
    while (this.peekKeyword("and")) {
      this.position++;
      left = { kind: "and", left, right: this.parseUnary(depth) };
    }
    return left;
  }

  private parseUnary(depth: number): Filter {
    if (++this.terms > MAX_TERMS) throw invalid(`Filter has more than ${MAX_TERMS} terms`);
    const token = this.next("an expression");
    if (token.kind === "(") {
      const inner = this.parseFilter(depth + 1);
      this.expect(")");
      return inner;
    }
    if (token.kind === "word" && token.text.toLowerCase() === "not") {
      this.expect("(");
      const inner = this.parseFilter(depth + 1);
      this.expect(")");
      return { kind: "not", filter: inner };
    }
    if (token.kind !== "word" || !ATTR_PATH.test(token.text))
      throw invalid(`Expected an attribute path at position ${token.at + 1}`);
    const path = token.text;
    if (this.peek()?.kind === "[") {
      this.position++;
      const inner = this.parseFilter(depth + 1);
      this.expect("]");
      return { kind: "valuePath", path, filter: inner };
    }
    const opToken = this.next("an operator");
    const op = opToken.text.toLowerCase();
    if (opToken.kind === "word" && op === "pr") return { kind: "present", path };
    if (opToken.kind !== "word" || !COMPARE_OPS.has(op))
      throw invalid(`Unknown operator '${opToken.text}' at position ${opToken.at + 1}`);
    return { kind: "compare", path, op: op as CompareOp, value: this.parseValue() };
  }

  private parseValue(): FilterValue {
    const token = this.next("a value");
    if (token.kind === "string") return token.text;
    if (token.kind === "word") {
      const lower = token.text.toLowerCase();
      if (lower === "true") return true;
      if (lower === "false") return false;
      if (lower === "null") return null;
      if (NUMBER.test(token.text)) return Number(token.text);
    }
    throw invalid(`Expected a quoted string, number, true, false or null at position ${token.at + 1}`);
  }

  peek(): Token | undefined {
    return this.tokens[this.position];
  }

  private peekKeyword(word: string): boolean {
    const token = this.peek();
    return token?.kind === "word" && token.text.toLowerCase() === word;
  }

  next(what: string): Token {
    const token = this.tokens[this.position++];
    if (!token) throw invalid(`Expected ${what} at the end of the filter`);
    return token;
  }

  expect(kind: Token["kind"]): void {
    const token = this.next(`'${kind}'`);
    if (token.kind !== kind) throw invalid(`Expected '${kind}' at position ${token.at + 1}`);
  }

  done(): boolean {
    return this.position >= this.tokens.length;
  }
}

export function parseFilter(input: string): Filter {
  if (input.length > MAX_FILTER_LENGTH) throw invalid(`Filter is longer than ${MAX_FILTER_LENGTH} characters`);
  const parser = new Parser(tokenize(input));
  if (parser.done()) throw invalid("Filter is empty");
  const filter = parser.parseFilter();
  if (!parser.done()) {
    const extra = parser.next("");
    throw invalid(`Unexpected '${extra.text}' at position ${extra.at + 1}`);
  }
  return filter;
}

/** A PATCH operation's path: `attr`, `attr.sub`, `urn:...:attr`, `attr[filter]` or `attr[filter].sub`. */
export function parsePatchPath(input: string): PatchPath {
  const fail = () => new BadRequestError(`Invalid PATCH path '${input.slice(0, 200)}'`, "invalidPath");
  if (input.length > MAX_FILTER_LENGTH) throw fail();
  const bracket = input.indexOf("[");
  if (bracket < 0) {
    const path = input.trim();
    if (!ATTR_PATH.test(path)) throw fail();
    return { path };
  }
  const path = input.slice(0, bracket).trim();
  const close = input.lastIndexOf("]");
  if (!ATTR_PATH.test(path) || (path.includes(".") && !/^urn:/i.test(path)) || close < bracket) throw fail();
  const rest = input.slice(close + 1).trim();
  if (rest && !/^\.[A-Za-z$][\w$-]*$/.test(rest)) throw fail();
  let filter: Filter;
  try {
    filter = parseFilter(input.slice(bracket + 1, close));
  } catch (error) {
    if (error instanceof BadRequestError)
      throw new BadRequestError(`Invalid PATCH path filter: ${error.message}`, "invalidPath");
    throw error;
  }
  return { path, filter, subAttribute: rest ? rest.slice(1) : undefined };
}

/**
 * Splits an `attributes`/`excludedAttributes` parameter at the commas that are not inside a
 * `[...]` value filter or a quoted string.
 */
export function splitAttributeList(input: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < input.length; i++) {
    const c = input[i];
    if (quoted) {
      if (c === "\\") i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === "[") depth++;
    else if (c === "]") depth = Math.max(0, depth - 1);
    else if (c === "," && depth === 0) {
      parts.push(input.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(input.slice(start));
  return parts.map((p) => p.trim()).filter(Boolean);
}
